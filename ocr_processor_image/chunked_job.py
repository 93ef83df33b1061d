"""A document read in chunks: fan-out, each chunk's pages, and the merge.

Fan-out, by the job's first invocation, in order, so that a crash anywhere is redone by the
retry of that same invocation:
1. claim the fan-out on the job record (`JobStore.start_chunks`): totals and counters. A
   duplicate delivery of the job's event, from another invocation, stops here;
2. split: a PDF's page ranges are copied (not rendered) into one small PDF per chunk under
   work/<job_id>/chunks/, so a chunk downloads its own pages only. Other inputs (a multi-page
   TIFF) are read whole by each chunk, which decodes only its own frames;
3. write work/<job_id>/plan.json: what the merge needs (source facts, the cache key, chunks);
4. dispatch each chunk: a CPU model's to this function (an async invoke each; Lambda runs them
   in parallel, as many as its concurrency allows, and a throttled event waits in Lambda's async
   queue), PaddleOCR-VL's to the endpoint (an async inference each, idp/flow/vl_submit.py; the
   instance serves several at once and queues the rest).

Each chunk's pages are then read, here (`run_chunk`) or at the VL endpoint (endpoint.py), and
`commit_chunk` takes them from there, exactly once under duplicates, retries and crashes:
- a chunk whose job has ended does nothing (another chunk failed it, or it completed);
- a chunk counted before is not read again; counting and claiming the merge are
  idp.flow.chunks.fan_in's (a merge that crashes is redone by Lambda's retry of the same
  event, whose request id takes the merge lease back at once);
- a user error in any chunk (a damaged page) fails the whole job with that error's code; the
  other chunks then find the job ended. A chunk that crashes on every attempt reaches the
  on-failure destination, and the completion handler fails the job naming its pages.
The invocation that counts the last chunk merges: result.pdf from the chunks' parts, result.json
(+ result.md) from their partials, then the job completes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from idp.aws.s3 import read_input
from idp.contract import names
from idp.contract.errors import JobError
from idp.contract.jobs import ChunkInput, ChunkSpec, DispatchedJob, validate_language
from idp.contract.names import JobStatus, MediaType, Service
from idp.contract.results import PageResult, result_key
from idp.contract.timestamps import ms, utc_now
from idp.document.decode import open_document
from idp.document.ocr.pipeline import ocr_document
from idp.document.text_layer.page import job_layer_reader, text_layer_reader
from idp.flow.chunks.fan_in import FanIn
from idp.flow.chunks.plan import (
    ChunkPlan,
    PartialResult,
    part_pdf_key,
    plan_chunks,
    plan_key,
    searchable_part_key,
)
from idp.flow.lambda_invoke import ProcessorInvoker
from ocr_processor_image.outcome import InvocationOutcome, InvocationStatus
from ocr_processor_image.outputs import InputDocument, complete_job, fail_job
from ocr_processor_image.result_pdf import merge_searchable_parts, upload_searchable_pdf

if TYPE_CHECKING:
    from idp.contract.job_record import JobRecord
    from ocr_processor_image.warm_state import WarmState

logger = Logger(service=Service.PROCESSOR.value, child=True)

PROGRESS_INTERVAL_S = 1.0

# Where chunks are sent: this function (an async invoke each) or the VL endpoint.
ChunkDispatcher = ProcessorInvoker


def fan_out(
    job: DispatchedJob,
    document: InputDocument,
    warm: WarmState,
    *,
    content_key: str | None,
    dispatch: ChunkDispatcher,
    chunk_pages: int,
    invocation_id: str,
    timings: dict[str, float],
) -> InvocationOutcome:
    """Split `job`'s document into chunks and dispatch them. The job keeps its status:
    PROCESSING for OCR chunks, QUEUED for VL chunks until the endpoint's results."""
    s3, store, settings = warm.s3, warm.store, warm.settings
    facts = document.facts
    started = time.perf_counter()
    planned = plan_chunks(facts.page_count, chunk_pages)
    if not store.start_chunks(
        job.job_id,
        pages_total=facts.page_count,
        chunks_total=len(planned),
        chunk_pages=chunk_pages,
        invocation_id=invocation_id,
    ):
        logger.info("job %s was fanned out by another invocation or has ended", job.job_id)
        return InvocationOutcome(job_id=job.job_id, status=InvocationStatus.SKIPPED)

    if facts.media_type is MediaType.PDF:
        split = []
        with open_document(document.data, max_pages=settings.max_pages) as opened:
            for chunk in planned:
                key = part_pdf_key(job.job_id, chunk.index)
                s3.put_object(
                    Bucket=settings.results_bucket,
                    Key=key,
                    Body=opened.extract_pdf_pages(chunk.first_page, chunk.last_page),
                    ContentType="application/pdf",
                )
                split.append(
                    chunk.model_copy(
                        update={"part_key": key, "part_bucket": settings.results_bucket}
                    )
                )
        planned = split
    plan = ChunkPlan(
        job_id=job.job_id,
        model=job.model.value,
        lang=job.lang,
        source=document.source(job),
        cache_key=content_key,
        chunks=planned,
        split_ms=ms(time.perf_counter() - started),
        textract=job.options.textract_json,
        owner=job.owner,
    )
    s3.put_object(
        Bucket=settings.results_bucket,
        Key=plan_key(job.job_id),
        Body=plan.model_dump_json().encode(),
        ContentType="application/json",
    )
    tick = time.perf_counter()
    for chunk in planned:
        dispatch.invoke_async(job.model_copy(update={"chunk": chunk}))
    timings |= {"split": plan.split_ms, "dispatch": ms(time.perf_counter() - tick)}
    store.record_fan_out(job.job_id, timings_ms={k: timings[k] for k in ("split", "dispatch")})
    logger.info(
        "job %s fanned out: %d pages in %d chunks of %d",
        job.job_id,
        facts.page_count,
        len(planned),
        chunk_pages,
    )
    return InvocationOutcome(
        job_id=job.job_id, status=InvocationStatus.FANNED_OUT, timings_ms=timings
    )


def run_chunk(
    job: DispatchedJob,
    chunk: ChunkSpec,
    warm: WarmState,
    *,
    invocation_id: str,
    lease_seconds: float,
) -> InvocationOutcome:
    """Read one chunk's pages here, then commit them (and merge when it is the last)."""

    def read() -> PartialResult:
        return _ocr_chunk(job, chunk, warm)

    return commit_chunk(
        job, chunk, read, warm, invocation_id=invocation_id, lease_seconds=lease_seconds
    )


def commit_chunk(
    job: DispatchedJob,
    chunk: ChunkSpec,
    read: Callable[[], PartialResult],
    warm: WarmState,
    *,
    invocation_id: str,
    lease_seconds: float,
) -> InvocationOutcome:
    """A chunk's pages (`read`: how to get them) counted once, and the merge when every chunk
    is counted. A user error reading them fails the job, naming the chunk's pages."""
    store = warm.store
    record = store.get(job.job_id)
    if record is None or JobStatus(record["status"]).is_terminal:
        logger.info("job %s has ended; chunk %d skipped", job.job_id, chunk.index)
        return InvocationOutcome(job_id=job.job_id, status=InvocationStatus.SKIPPED)
    fan_in = FanIn(s3=warm.s3, store=store, bucket=warm.settings.results_bucket)
    if chunk.index not in record.get("chunks_committed", []):
        try:
            partial = read()
        except JobError as error:
            return fail_job(warm, job.job_id, error, failed_pages=chunk.label)
        counted = fan_in.commit(partial)
        if counted is None:
            logger.info("chunk %d of job %s was counted before", chunk.index, job.job_id)
        else:
            record = counted
    if not fan_in.claim_merge(
        job.job_id, record, invocation_id=invocation_id, lease_seconds=lease_seconds
    ):
        return InvocationOutcome(job_id=job.job_id, status=InvocationStatus.CHUNK_DONE)
    return merge(job, record, fan_in, warm)


def merge(
    job: DispatchedJob, record: JobRecord, fan_in: FanIn, warm: WarmState
) -> InvocationOutcome:
    """Merge → write outputs → complete, for the invocation that won the merge."""
    started = time.perf_counter()
    bucket = warm.settings.results_bucket
    fields: dict[str, str] = {}
    if job.options.searchable_pdf:
        # First, so that the merge's time in result.json includes it.
        pdf_uri = merge_searchable_parts(
            warm.s3,
            bucket,
            job_id=job.job_id,
            chunk_count=int(record.get("chunks_total", 0)),
            key=result_key(job.job_id, names.RESULT_PDF, owner=job.owner),
        )
        if pdf_uri is not None:
            fields["pdf_uri"] = pdf_uri
    done = fan_in.write_result(job.job_id, record, started=started)
    outcome = complete_job(
        warm,
        job.job_id,
        done.written,
        model=job.model.value,
        pages=done.merged.pages,
        source=done.plan.source,
        engine=done.merged.engine,
        timings=done.merged.timings_ms,
        review_pages=done.merged.review_pages,
        merged_at=utc_now(),
        **fields,
    )
    fan_in.delete_work(job.job_id)
    return outcome


def write_chunk_pdf(
    job: DispatchedJob,
    chunk: ChunkSpec,
    warm: WarmState,
    *,
    pages: list[PageResult],
    data: bytes | None = None,
) -> float:
    """The chunk's pages of result.pdf, from the chunk's own input (`data`, read here when not
    given); the merge joins them. Returns the milliseconds it took."""
    started = time.perf_counter()
    source = ChunkInput.of(chunk, bucket=job.bucket, key=job.key)
    if data is None:
        data = read_input(
            warm.s3, source.bucket, source.key, max_bytes=warm.settings.max_input_bytes
        )
    upload_searchable_pdf(
        warm.s3,
        warm.settings.results_bucket,
        searchable_part_key(job.job_id, chunk.index),
        data=data,
        pages=pages,
        first_page=source.first_page,
    )
    return ms(time.perf_counter() - started)


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
        page_layer=job_layer_reader(job),
    )
    timings.update(outcome.timings_ms)
    if job.options.searchable_pdf:
        timings["searchable_pdf"] = write_chunk_pdf(
            job, chunk, warm, pages=outcome.pages, data=data
        )
    timings["total"] = ms(time.perf_counter() - started)
    return PartialResult(
        job_id=job.job_id, chunk=chunk, engine=engine.info, pages=outcome.pages, timings_ms=timings
    )
