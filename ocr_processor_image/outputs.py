"""What the processor reads and writes in S3, and what an invocation returns."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from idp import names
from idp.aws.s3 import read_input, s3_uri
from idp.documents import DocumentFacts, open_document
from idp.jobs import DispatchedJob
from idp.names import JobStatus, Service
from idp.results import OcrResult, PageResult, result_key
from idp.searchable_pdf import upload_searchable_pdf
from idp.timestamps import ms

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

    from idp.errors import JobError
    from idp.store import JobStore
    from ocr_processor_image.warm_state import WarmState

logger = Logger(service=Service.PROCESSOR.value, child=True)


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


def fail_job(
    store: JobStore, job_id: str, error: JobError, *, started: float | None = None, **fields: Any
) -> InvocationOutcome:
    """End the job FAILED with a user's error (`started`: when its work began, for its total
    time). The invocation returns normally: Lambda's retry could not change the answer."""
    if started is not None:
        fields["timings_ms"] = {"total": ms(time.perf_counter() - started)}
    logger.warning("job %s failed: %s %s", job_id, error.code, error.message, extra=fields)
    store.mark_failed(job_id, error, **fields)
    return InvocationOutcome(job_id=job_id, status=InvocationStatus.FAILED, error=error.to_record())


def read_document(
    job: DispatchedJob, warm: WarmState, timings: dict[str, float]
) -> tuple[bytes, DocumentFacts]:
    """The job's input and its facts (the download's time in `timings`). A damaged, oversized
    or too long document is refused here, before an engine is loaded or GPU time is spent."""
    started = time.perf_counter()
    data = read_input(warm.s3, job.bucket, job.key, max_bytes=warm.settings.max_input_bytes)
    timings["download"] = ms(time.perf_counter() - started)
    with open_document(
        data, pdf_scale=job.options.pdf_scale, max_pages=warm.settings.max_pages
    ) as document:
        return data, document.facts


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
