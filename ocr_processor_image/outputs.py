"""What the processor reads and writes in S3, and what an invocation returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from idp import names
from idp.aws.s3 import read_input, s3_uri
from idp.jobs import DispatchedJob
from idp.names import JobStatus
from idp.results import OcrResult, PageResult, result_key
from idp.searchable_pdf import upload_searchable_pdf

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


class InvocationStatus(StrEnum):
    """What one invocation of the processor did: the `status` of its Lambda response."""

    COMPLETED = JobStatus.COMPLETED.value
    FAILED = JobStatus.FAILED.value
    SKIPPED = "SKIPPED"  # terminal, or held by another invocation: a duplicate delivery
    REJECTED = "REJECTED"  # the event is not a DispatchedJob
    FANNED_OUT = "FANNED_OUT"  # the document's chunks were dispatched
    CHUNK_DONE = "CHUNK_DONE"  # a chunk was counted; others are still running
    SUBMITTED = "SUBMITTED"  # a PaddleOCR-VL job was submitted to the endpoint whole
    SEARCHABLE_PDF_WRITTEN = "SEARCHABLE_PDF_WRITTEN"  # result.pdf of a completed VL job


@dataclass(frozen=True)
class InvocationOutcome:
    """What the invocation did; the handler returns it as the Lambda response."""

    job_id: str
    status: InvocationStatus
    result_uri: str | None = None
    error: dict[str, str] | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"job_id": self.job_id, "status": self.status.value}
        if self.result_uri:
            out["result_uri"] = self.result_uri
        if self.error:
            out["error"] = self.error
        if self.timings_ms:
            out["timings_ms"] = self.timings_ms
        return out


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def write_result(s3: S3Client, bucket: str, result: OcrResult) -> str:
    """result.json (+ result.md when the model yields Markdown); returns the JSON's URI."""
    json_key = result_key(result.job_id)
    s3.put_object(
        Bucket=bucket,
        Key=json_key,
        Body=result.model_dump_json().encode(),
        ContentType="application/json",
    )
    if result.markdown is not None:
        s3.put_object(
            Bucket=bucket,
            Key=result_key(result.job_id, names.RESULT_MD),
            Body=result.markdown.encode(),
            ContentType="text/markdown; charset=utf-8",
        )
    return s3_uri(bucket, json_key)


def write_result_pdf(
    s3: S3Client, bucket: str, job_id: str, *, data: bytes, pages: list[PageResult]
) -> str | None:
    """result.pdf: the input's pages with their recognized text as an invisible layer."""
    return upload_searchable_pdf(
        s3, bucket, result_key(job_id, names.RESULT_PDF), data=data, pages=pages
    )


def write_result_pdf_of_completed_job(
    job: DispatchedJob, s3: S3Client, bucket: str, *, max_bytes: int
) -> str | None:
    """result.pdf of a job whose result.json another worker wrote (a PaddleOCR-VL job: the
    completion handler, a zip function, has no PDF libraries). A missing result.json is a
    fault: Lambda's retry finds it once the merge that asked for this has written it."""
    body = s3.get_object(Bucket=bucket, Key=result_key(job.job_id))["Body"]
    result = OcrResult.model_validate_json(body.read())
    data = read_input(s3, job.bucket, job.key, max_bytes=max_bytes)
    return write_result_pdf(s3, bucket, job.job_id, data=data, pages=result.pages)
