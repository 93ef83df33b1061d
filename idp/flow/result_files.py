"""results/<owner>/<job_id>/result.json, result.md and result.textract.json: the one writer of a
job's result files.

Every path to a finished job comes here: a document read in one invocation (its whole
`OcrResult`), a chunked one (streamed from its partials by idp.flow.chunks, so a long document is
never held whole), a VL result and a result served from the cache. Both ways write the same
bytes for the same pages: compact JSON, as pydantic writes an `OcrResult`, the Markdown of
layout models beside it, and the pages as a Textract response (idp.flow.textract_json) unless
the job turned it off.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Final, NamedTuple

from idp.aws.s3 import s3_uri
from idp.contract import names
from idp.contract.results import OcrResult, result_key
from idp.flow.chunks.merge import MergedResult, stream_merged_result
from idp.flow.chunks.plan import ChunkPlan, PartialResult
from idp.flow.textract_json import TextractWriter

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

    from idp.contract.jobs import ChunkSpec

JSON_CONTENT_TYPE: Final = "application/json"
MARKDOWN_CONTENT_TYPE: Final = "text/markdown; charset=utf-8"


class WrittenResult(NamedTuple):
    """Where a job's result files went."""

    result_uri: str
    markdown_uri: str | None = None
    textract_uri: str | None = None


class ResultFiles:
    """A job's result files in the results bucket."""

    def __init__(self, s3: S3Client, bucket: str) -> None:
        self.s3 = s3
        self.bucket = bucket

    def write(
        self, result: OcrResult, *, owner: str | None, textract: bool = True
    ) -> WrittenResult:
        """result.json, result.md when the model yields Markdown, and result.textract.json
        when `textract`, under the slice of the job's `owner`."""
        json_key = result_key(result.job_id, owner=owner)
        self.s3.put_object(
            Bucket=self.bucket,
            Key=json_key,
            Body=result.model_dump_json().encode(),
            ContentType=JSON_CONTENT_TYPE,
        )
        markdown_uri = None
        if result.markdown is not None:
            markdown_key = result_key(result.job_id, names.RESULT_MD, owner=owner)
            self.s3.put_object(
                Bucket=self.bucket,
                Key=markdown_key,
                Body=result.markdown.encode(),
                ContentType=MARKDOWN_CONTENT_TYPE,
            )
            markdown_uri = s3_uri(self.bucket, markdown_key)
        textract_uri = None
        if textract:
            with tempfile.TemporaryFile() as textract_file:
                writer = TextractWriter(textract_file, job_id=result.job_id)
                for page in result.pages:
                    writer.add(page)
                writer.close(model_version=result.model)
                textract_uri = self._upload_result(
                    textract_file, result_key(result.job_id, names.RESULT_TEXTRACT, owner=owner)
                )
        return WrittenResult(s3_uri(self.bucket, json_key), markdown_uri, textract_uri)

    def write_merged(
        self,
        plan: ChunkPlan,
        read_part: Callable[[ChunkSpec], PartialResult],
        *,
        timings: Callable[[list[dict[str, float]]], dict[str, float]],
    ) -> tuple[WrittenResult, MergedResult]:
        """result.json (+ result.md, + result.textract.json unless the plan turned it off) of a
        chunked job, streamed from its partials through temporary files: one partial is held at
        a time."""
        job_id = plan.job_id
        with (
            tempfile.TemporaryFile() as result_file,
            tempfile.TemporaryFile() as markdown_file,
            tempfile.TemporaryFile() as textract_file,
        ):
            writer = TextractWriter(textract_file, job_id=job_id) if plan.textract else None
            merged = stream_merged_result(
                plan,
                read_part,
                result_file,
                timings=timings,
                markdown_out=markdown_file,
                on_page=writer.add if writer is not None else None,
            )
            json_key = result_key(job_id, owner=plan.owner)
            self._upload(result_file, json_key, JSON_CONTENT_TYPE)
            markdown_uri = None
            if merged.has_markdown:
                markdown_key = result_key(job_id, names.RESULT_MD, owner=plan.owner)
                self._upload(markdown_file, markdown_key, MARKDOWN_CONTENT_TYPE)
                markdown_uri = s3_uri(self.bucket, markdown_key)
            textract_uri = None
            if writer is not None:
                writer.close(model_version=plan.model)
                textract_uri = self._upload_result(
                    textract_file, result_key(job_id, names.RESULT_TEXTRACT, owner=plan.owner)
                )
        written = WrittenResult(s3_uri(self.bucket, json_key), markdown_uri, textract_uri)
        return written, merged

    def _upload_result(self, file: IO[bytes], key: str) -> str:
        self._upload(file, key, JSON_CONTENT_TYPE)
        return s3_uri(self.bucket, key)

    def _upload(self, file: IO[bytes], key: str, content_type: str) -> None:
        file.seek(0)
        self.s3.upload_fileobj(file, self.bucket, key, ExtraArgs={"ContentType": content_type})
