"""What a job reads and writes: its input, its outputs (result.json, result.md, result.pdf, the
cache entry), its final status, and what an invocation returns."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from botocore.exceptions import ClientError

from idp.aws.errors import is_not_found
from idp.aws.s3 import read_input
from idp.contract import names
from idp.contract.conversion import (
    CONVERTED_PDF,
    CONVERTED_SHEETS,
    ConversionInfo,
    ConvertedSheets,
    Sheet,
    converted_key,
)
from idp.contract.errors import ConversionFailed, UnsupportedMediaType
from idp.contract.names import MediaType, Metric, Service
from idp.contract.results import EngineInfo, OcrResult, PageResult, SourceInfo, result_key
from idp.contract.timestamps import ms
from idp.document.decode import DocumentFacts, open_document
from idp.document.media_types import detect_media_type
from idp.flow.office_conversion import conversion_request
from idp.flow.result_cache import ResultCache
from idp.flow.result_files import ResultFiles, WrittenResult
from ocr_processor_image.outcome import InvocationOutcome, InvocationStatus
from ocr_processor_image.result_pdf import upload_searchable_pdf

if TYPE_CHECKING:
    from idp.contract.errors import JobError
    from idp.contract.jobs import DispatchedJob
    from ocr_processor_image.warm_state import WarmState

logger = Logger(service=Service.PROCESSOR.value, child=True)


@dataclass(frozen=True)
class InputDocument:
    """A job's input, read and checked: the bytes whose pages are read (the input, or an Office
    document's conversion to PDF), what opening them told, and the input as uploaded."""

    data: bytes
    facts: DocumentFacts  # of `data`
    sha256: str  # the input's, as uploaded
    size_bytes: int
    media_type: MediaType  # the input's, as uploaded
    conversion: ConversionInfo | None = None
    sheets: list[Sheet] = field(default_factory=list)  # a spreadsheet's, in its order

    def source(self, job: DispatchedJob) -> SourceInfo:
        """The result's `source`: `job`'s input as uploaded, and the pages read."""
        return SourceInfo(
            bucket=job.bucket,
            key=job.key,
            sha256=self.sha256,
            media_type=self.media_type.value,
            page_count=self.facts.page_count,
            size_bytes=self.size_bytes,
            conversion=self.conversion,
        )


def read_document(job: DispatchedJob, warm: WarmState, timings: dict[str, float]) -> InputDocument:
    """The job's input and its facts (the download's time in `timings`). A damaged, oversized
    or too long document is refused here, before an engine is loaded or GPU time is spent; an
    Office document is converted to PDF first (by the converter function)."""
    started = time.perf_counter()
    data = read_input(warm.s3, job.bucket, job.key, max_bytes=warm.settings.max_input_bytes)
    timings["download"] = ms(time.perf_counter() - started)
    media_type = detect_media_type(data)
    pages_data, conversion = data, None
    sheets: list[Sheet] = []
    if media_type.is_office:
        started = time.perf_counter()
        pages_data, conversion, sheets = _converted(job, warm, media_type)
        timings["convert"] = ms(time.perf_counter() - started)
    with open_document(
        pages_data, pdf_scale=job.options.pdf_scale, max_pages=warm.settings.max_pages
    ) as document:
        return InputDocument(
            pages_data,
            document.facts,
            sha256=hashlib.sha256(data).hexdigest(),
            size_bytes=len(data),
            media_type=media_type,
            conversion=conversion,
            sheets=sheets,
        )


def _converted(
    job: DispatchedJob, warm: WarmState, media_type: MediaType
) -> tuple[bytes, ConversionInfo, list[Sheet]]:
    """The job's Office document as the converter wrote it: its PDF, how, and its sheets."""
    if warm.converter is None:
        raise UnsupportedMediaType(
            f"{media_type.label} documents are converted to PDF by the Office converter, which "
            "this deployment does not have"
        )
    answer = warm.converter.convert(
        conversion_request(
            warm.s3,
            job_id=job.job_id,
            input_bucket=job.bucket,
            input_key=job.key,
            results_bucket=warm.settings.results_bucket,
        )
    )
    if answer.conversion is None:
        raise ConversionFailed(f"the converter answered no conversion: {answer}")
    # The objects at the keys this job's URLs named, and only those: the converter could
    # write nowhere else.
    bucket = warm.settings.results_bucket
    pdf = _converted_object(warm, bucket, converted_key(job.job_id, CONVERTED_PDF))
    sheets: list[Sheet] = []
    if answer.sheets:
        body = _converted_object(warm, bucket, converted_key(job.job_id, CONVERTED_SHEETS))
        sheets = ConvertedSheets.model_validate_json(body).sheets
    return pdf, answer.conversion, sheets


def _converted_object(warm: WarmState, bucket: str, key: str) -> bytes:
    try:
        body: bytes = warm.s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    except ClientError as error:
        if is_not_found(error):
            raise ConversionFailed(
                f"the converter answered a conversion but wrote no {key.rsplit('/', 1)[-1]}"
            ) from None
        raise
    return body


def finish_job(
    job: DispatchedJob,
    result: OcrResult,
    data: bytes,
    warm: WarmState,
    *,
    timings: dict[str, float],
    started: float | None = None,
    cache_key: str | None = None,
    **fields: Any,
) -> InvocationOutcome:
    """Write a whole result's outputs, then record the job COMPLETED.

    The outputs: result.json (+ result.md, + result.textract.json unless the job turned it
    off), the result-cache entry under `cache_key`, and result.pdf from the input `data` when
    the job asks for it. `started` (time.perf_counter()
    when the job's work began) adds its total time; `fields` are more to record on the job.
    """
    bucket = warm.settings.results_bucket
    tick = time.perf_counter()
    written = ResultFiles(warm.s3, bucket).write(
        result, owner=job.owner, textract=job.options.textract_json
    )
    if cache_key is not None:
        ResultCache(warm.s3, bucket).put(cache_key, result)
    timings["write_result"] = ms(time.perf_counter() - tick)
    if job.options.searchable_pdf:
        tick = time.perf_counter()
        pdf_uri = write_result_pdf(warm, job, data=data, pages=result.pages)
        timings["searchable_pdf"] = ms(time.perf_counter() - tick)
        if pdf_uri is not None:
            fields["pdf_uri"] = pdf_uri
    if started is not None:
        timings["total"] = ms(time.perf_counter() - started)
    logger.info(
        "job %s completed: %d pages in %.0f ms",
        job.job_id,
        len(result.pages),
        timings.get("total", 0.0),
    )
    return complete_job(
        warm,
        job.job_id,
        written,
        model=result.model,
        pages=len(result.pages),
        source=result.source,
        engine=result.engine,
        timings=timings,
        review_pages=result.review_pages,
        **fields,
    )


def write_result_pdf(
    warm: WarmState, job: DispatchedJob, *, data: bytes, pages: list[PageResult]
) -> str | None:
    """result.pdf: the input's pages with their recognized text as an invisible layer."""
    bucket = warm.settings.results_bucket
    return upload_searchable_pdf(
        warm.s3,
        bucket,
        result_key(job.job_id, names.RESULT_PDF, owner=job.owner),
        data=data,
        pages=pages,
    )


def complete_job(
    warm: WarmState,
    job_id: str,
    written: WrittenResult,
    *,
    model: str,
    pages: int,
    source: SourceInfo,
    engine: EngineInfo,
    timings: dict[str, float],
    review_pages: list[int],
    **fields: Any,
) -> InvocationOutcome:
    """Record the job COMPLETED with its result files and the pages whose verdict asks a person
    to look (`fields`: more to record on the job)."""
    if written.markdown_uri is not None:
        fields["markdown_uri"] = written.markdown_uri
    if written.textract_uri is not None:
        fields["textract_uri"] = written.textract_uri
    completed = warm.store.mark_completed(
        job_id,
        result_uri=written.result_uri,
        page_count=pages,
        timings_ms=timings,
        pages_total=pages,
        pages_done=pages,
        content_sha256=source.sha256,
        media_type=source.media_type,
        engine=engine.model_dump(),
        review_pages=review_pages,
        **fields,
    )
    if completed and warm.telemetry is not None:
        warm.telemetry.count(Metric.JOBS_COMPLETED, model=model)
    if not completed:
        # Ended meanwhile (e.g. by the stale-job sweep): the record stays as it is.
        logger.warning("job %s was already terminal; result written but status kept", job_id)
    return InvocationOutcome(
        job_id=job_id,
        status=InvocationStatus.COMPLETED,
        result_uri=written.result_uri,
        timings_ms=timings,
    )


def fail_job(
    warm: WarmState, job_id: str, error: JobError, *, started: float | None = None, **fields: Any
) -> InvocationOutcome:
    """End the job FAILED with a user's error (`started`: when its work began, for its total
    time). The invocation returns normally: Lambda's retry could not change the answer."""
    if started is not None:
        fields["timings_ms"] = {"total": ms(time.perf_counter() - started)}
    logger.warning("job %s failed: %s %s", job_id, error.code, error.message, extra=fields)
    if warm.store.mark_failed(job_id, error, **fields) and warm.telemetry is not None:
        warm.telemetry.job_failed(error.code)
    return InvocationOutcome(job_id=job_id, status=InvocationStatus.FAILED, error=error.to_record())
