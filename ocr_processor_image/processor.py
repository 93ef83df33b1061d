"""The OCR processor's logic: one dispatched job → result.json (+ result.md) and a final status.

A PaddleOCR-VL job is not run here: it is submitted to the VL endpoint, whole or in chunks
(vl_plan.py), and the completion handler records its result.

A document of up to one chunk's pages is OCR'd here, in this invocation. A longer one is split
into page ranges that run as invocations of their own (fan_out.py); each OCRs its range and the
last to finish merges the partial results (chunk_worker.py).

A user's bad input (JobError) ends the job FAILED with its code and returns normally, so
Lambda does not retry it. Anything else is a fault: it is re-raised so Lambda's async retries
run, and the on-failure destination ends the job FAILED (PROCESSOR_CRASHED) after the last one.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from idp import names
from idp.chunks import should_chunk
from idp.errors import JobError, UnsupportedModel
from idp.jobs import DispatchedJob, validate_language
from idp.names import Backend, Service
from idp.ocr.pipeline import ocr_document
from idp.result_cache import ResultCache, cache_key
from idp.results import OcrResult
from idp.text_layer.page import text_layer_reader
from idp.timestamps import ms
from ocr_processor_image.chunk_worker import run_chunk
from ocr_processor_image.fan_out import fan_out
from ocr_processor_image.outputs import (
    InvocationOutcome,
    InvocationStatus,
    fail_job,
    read_document,
    write_result,
    write_result_pdf,
    write_result_pdf_of_completed_job,
)
from ocr_processor_image.vl_plan import plan_vl

if TYPE_CHECKING:
    from idp.store import JobStore
    from ocr_processor_image.warm_state import WarmState


# A child of the handler's logger: its records carry the job_id the handler appends.
logger = Logger(service=Service.PROCESSOR.value, child=True)


def process_job(
    job: DispatchedJob,
    warm: WarmState,
    *,
    invocation_id: str | None = None,
    lease_seconds: float | None = None,
) -> InvocationOutcome:
    """Run one job, or one chunk of it. Re-raises only unexpected faults (for a retry).

    `invocation_id` (the Lambda request id, the same across retries of one async event) and
    `lease_seconds` (how long this invocation can run) keep a duplicate delivery of the event
    from OCR-ing the document while this invocation still may. `warm.chunks` invokes this
    function again for each chunk of a document longer than `settings.chunk_pages`; `warm.vl`
    submits a PaddleOCR-VL job to its endpoint (whole or in chunks) instead of running it here.
    """
    invocation_id = invocation_id or str(uuid.uuid4())
    settings = warm.settings
    if job.task == "searchable_pdf":
        uri = write_result_pdf_of_completed_job(
            job, warm.s3, settings.results_bucket, max_bytes=settings.max_input_bytes
        )
        logger.info("job %s: result.pdf %s", job.job_id, uri or "not written")
        return InvocationOutcome(job_id=job.job_id, status=InvocationStatus.SEARCHABLE_PDF_WRITTEN)
    if job.model.backend is Backend.SAGEMAKER:
        return _submit_vl(job, warm, invocation_id=invocation_id)
    if job.chunk is not None:
        return run_chunk(
            job,
            job.chunk,
            warm,
            invocation_id=invocation_id,
            lease_seconds=lease_seconds or names.PROCESSOR_TIMEOUT_SECONDS,
        )
    if not warm.store.mark_processing(
        job.job_id, invocation_id=invocation_id, lease_seconds=lease_seconds
    ):
        logger.info("job %s is terminal or held by another invocation; skipped", job.job_id)
        return InvocationOutcome(job_id=job.job_id, status=InvocationStatus.SKIPPED)
    started = time.perf_counter()
    # The input and its pages stay in memory: a job leaves nothing in /tmp, so a warm
    # container's disk holds only the model cache.
    try:
        return _run(job, warm, invocation_id=invocation_id, started=started)
    except JobError as error:
        return fail_job(warm.store, job.job_id, error, started=started)


def _submit_vl(job: DispatchedJob, warm: WarmState, *, invocation_id: str) -> InvocationOutcome:
    if warm.vl is None:
        error = UnsupportedModel(f"{job.model.value} is not available in this deployment")
        return fail_job(warm.store, job.job_id, error)
    return plan_vl(job, warm, endpoint=warm.vl, invocation_id=invocation_id)


def _run(
    job: DispatchedJob, warm: WarmState, *, invocation_id: str, started: float
) -> InvocationOutcome:
    s3, settings = warm.s3, warm.settings
    timings: dict[str, float] = {}
    lang = validate_language(job.lang)
    # A bad file is refused before paying for an engine load (seconds in a cold environment).
    data, facts = read_document(job, warm, timings)

    cache = ResultCache(s3, settings.results_bucket)
    content_sha256 = hashlib.sha256(data).hexdigest()
    content_key = cache_key(
        content_sha256=content_sha256,
        model=job.model,
        lang=lang,
        options=job.options,
    )
    cached = cache.get(content_key)
    if cached is not None:
        return _complete_from_cache(job, cached, data, warm, timings=timings, started=started)

    if should_chunk(facts.page_count, settings.chunk_pages):
        if warm.chunks is None:
            raise RuntimeError("a chunked document needs a processor invoker for its chunks")
        return fan_out(
            job,
            data,
            warm,
            facts=facts,
            content_sha256=content_sha256,
            content_key=content_key,
            chunks=warm.chunks,
            invocation_id=invocation_id,
            timings=timings,
        )

    tick = time.perf_counter()
    engine = warm.engines.get(job.model, lang, job.options)
    timings["engine_load"] = ms(time.perf_counter() - tick)

    outcome = ocr_document(
        data,
        engine=engine,
        options=job.options,
        max_pages=settings.max_pages,
        read_page=text_layer_reader(job),
    )
    timings.update(outcome.timings_ms)

    tick = time.perf_counter()
    result = OcrResult.assemble(
        job_id=job.job_id,
        model=job.model.value,
        lang=lang,
        engine=engine.info,
        source=outcome.source(bucket=job.bucket, key=job.key),
        pages=outcome.pages,
        timings_ms=timings,
    )
    result_uri = write_result(s3, settings.results_bucket, result)
    cache.put(content_key, result)
    timings["write_result"] = ms(time.perf_counter() - tick)
    if job.options.searchable_pdf:
        tick = time.perf_counter()
        write_result_pdf(s3, settings.results_bucket, job.job_id, data=data, pages=outcome.pages)
        timings["searchable_pdf"] = ms(time.perf_counter() - tick)
    timings["total"] = ms(time.perf_counter() - started)
    logger.info(
        "job %s completed: %d pages in %.0f ms", job.job_id, len(outcome.pages), timings["total"]
    )
    return _complete(warm.store, result, result_uri, timings)


def _complete_from_cache(
    job: DispatchedJob,
    cached: OcrResult,
    data: bytes,
    warm: WarmState,
    *,
    timings: dict[str, float],
    started: float,
) -> InvocationOutcome:
    """The same bytes were OCR'd before with the same settings: reuse that result."""
    bucket = warm.settings.results_bucket
    if job.options.searchable_pdf:
        write_result_pdf(warm.s3, bucket, job.job_id, data=data, pages=cached.pages)
    timings["total"] = ms(time.perf_counter() - started)
    result = cached.model_copy(
        update={
            "job_id": job.job_id,
            "source": cached.source.model_copy(update={"bucket": job.bucket, "key": job.key}),
            "timings_ms": dict(timings),
            "cached": True,
        }
    )
    result_uri = write_result(warm.s3, bucket, result)
    logger.info("job %s completed from the result cache", job.job_id)
    return _complete(warm.store, result, result_uri, timings, cached=True)


def _complete(
    store: JobStore,
    result: OcrResult,
    result_uri: str,
    timings: dict[str, float],
    **fields: Any,
) -> InvocationOutcome:
    """Record the job COMPLETED with its result (`fields`: more to record on the job)."""
    pages = len(result.pages)
    completed = store.mark_completed(
        result.job_id,
        result_uri=result_uri,
        page_count=pages,
        timings_ms=timings,
        pages_total=pages,
        pages_done=pages,
        content_sha256=result.source.sha256,
        media_type=result.source.media_type,
        engine=result.engine.model_dump(),
        **fields,
    )
    if not completed:
        # Ended meanwhile (e.g. by the stale-job sweep): the record stays as it is.
        logger.warning("job %s was already terminal; result written but status kept", result.job_id)
    return InvocationOutcome(
        job_id=result.job_id,
        status=InvocationStatus.COMPLETED,
        result_uri=result_uri,
        timings_ms=timings,
    )
