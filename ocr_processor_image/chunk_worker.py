"""One chunk of a large document: OCR its pages, count it once, and merge when it is the last.

Exactly once, under duplicates, retries and crashes:
- a chunk whose job has ended does nothing (another chunk failed it, or it completed);
- a chunk counted before is not OCR'd again; counting and merging are idp/fan_in.py's (a
  duplicate or retried delivery never counts twice; a merge that crashes is redone by Lambda's
  retry of the same event, whose request id takes the merge lease back at once);
- a user error in any chunk (a damaged page) fails the whole job with that error's code; the
  other chunks then find the job ended. A chunk that crashes on every attempt reaches the
  on-failure destination, and the completion handler fails the job naming its pages.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from idp.aws.s3 import read_input
from idp.chunks import ChunkInput, ChunkPlan, ChunkSpec, PartialResult
from idp.errors import JobError
from idp.fan_in import ExtraOutputs, FanIn
from idp.jobs import DispatchedJob, validate_language
from idp.names import RESULT_PDF, JobStatus, Service
from idp.ocr.pipeline import ocr_document
from idp.results import result_key
from idp.searchable_pdf import (
    merge_searchable_parts,
    searchable_part_key,
    upload_searchable_pdf,
)
from idp.text_layer.page import text_layer_reader
from idp.timestamps import ms
from ocr_processor_image.outputs import InvocationOutcome, InvocationStatus, fail_job
from ocr_processor_image.settings import ProcessorSettings

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

    from ocr_processor_image.warm_state import WarmState

logger = Logger(service=Service.PROCESSOR.value, child=True)

PROGRESS_INTERVAL_S = 1.0


def run_chunk(
    job: DispatchedJob,
    chunk: ChunkSpec,
    warm: WarmState,
    *,
    invocation_id: str,
    lease_seconds: float,
) -> InvocationOutcome:
    s3, store, settings = warm.s3, warm.store, warm.settings
    record = store.get(job.job_id)
    if record is None or JobStatus(record["status"]).is_terminal:
        logger.info("job %s has ended; chunk %d skipped", job.job_id, chunk.index)
        return InvocationOutcome(job_id=job.job_id, status=InvocationStatus.SKIPPED)
    fan_in = FanIn(
        s3=s3,
        store=store,
        bucket=settings.results_bucket,
        extra_outputs=_merge_searchable_pdf(s3, settings) if job.options.searchable_pdf else None,
    )
    if chunk.index not in record.get("chunks_committed", []):
        try:
            partial = _ocr_chunk(job, chunk, warm)
        except JobError as error:
            return fail_job(store, job.job_id, error, failed_pages=chunk.label)
        counted = fan_in.commit(partial)
        if counted is None:
            logger.info("chunk %d of job %s was counted before", chunk.index, job.job_id)
        else:
            record = counted
    merged = fan_in.merge_if_complete(
        job.job_id, record, invocation_id=invocation_id, lease_seconds=lease_seconds
    )
    if merged is None:
        return InvocationOutcome(job_id=job.job_id, status=InvocationStatus.CHUNK_DONE)
    return InvocationOutcome(
        job_id=job.job_id,
        status=InvocationStatus.COMPLETED,
        result_uri=merged.result_uri,
        timings_ms=merged.timings_ms,
    )


def _merge_searchable_pdf(s3: S3Client, settings: ProcessorSettings) -> ExtraOutputs:
    """result.pdf from the chunks' parts, joined in page order."""

    def merge(job_id: str, plan: ChunkPlan) -> None:
        merge_searchable_parts(
            s3,
            settings.results_bucket,
            job_id=job_id,
            chunk_count=len(plan.chunks),
            key=result_key(job_id, RESULT_PDF),
        )

    return merge


def _ocr_chunk(job: DispatchedJob, chunk: ChunkSpec, warm: WarmState) -> PartialResult:
    s3, settings = warm.s3, warm.settings
    started = time.perf_counter()
    timings: dict[str, float] = {}
    lang = validate_language(job.lang)
    source = ChunkInput.of(chunk, bucket=job.bucket, key=job.key)
    data = read_input(s3, source.bucket, source.key, max_bytes=settings.max_input_bytes)
    timings["download"] = ms(time.perf_counter() - started)

    tick = time.perf_counter()
    engine = warm.engines.get(job.model, lang, job.options)
    timings["engine_load"] = ms(time.perf_counter() - tick)

    last_progress = 0.0

    def progress(done: int) -> None:
        # The first page, then at most one write a second: a progress bar needs no more, and
        # each write is billed. The last page is counted by commit_chunk.
        nonlocal last_progress
        now = time.monotonic()
        if done < chunk.page_count and now - last_progress >= PROGRESS_INTERVAL_S:
            warm.store.record_progress(job.job_id, chunk_index=chunk.index, pages_read=done)
            last_progress = now

    outcome = ocr_document(
        data,
        engine=engine,
        options=job.options,
        max_pages=settings.max_pages,
        on_pages_done=progress,
        first_page=source.first_page,
        last_page=source.last_page,
        page_offset=source.page_offset,
        read_page=text_layer_reader(job),
    )
    timings.update(outcome.timings_ms)
    if job.options.searchable_pdf:
        # The chunk's pages of result.pdf, from the chunk's own input; the merge joins them.
        tick = time.perf_counter()
        upload_searchable_pdf(
            s3,
            settings.results_bucket,
            searchable_part_key(job.job_id, chunk.index),
            data=data,
            pages=outcome.pages,
            first_page=source.first_page,
        )
        timings["searchable_pdf"] = ms(time.perf_counter() - tick)
    timings["total"] = ms(time.perf_counter() - started)
    return PartialResult(
        job_id=job.job_id, chunk=chunk, engine=engine.info, pages=outcome.pages, timings_ms=timings
    )
