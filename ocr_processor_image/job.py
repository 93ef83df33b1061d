"""The OCR processor's logic: every job, from its event to its final status, reads here.

    validate → plan → run its pages → (merge) → write outputs → complete

`run_job` takes a new job through those steps. How its pages are run is the plan's choice: in
this invocation (PP-OCRv5, PP-StructureV3), at the PaddleOCR-VL endpoint, or, for a document
longer than one chunk, in chunks, each an invocation of its own, the one that counts the last
chunk merging them (chunked_job.py). When pages are read elsewhere the job resumes here
later: `process_job` sends a chunk's event to chunked_job.py and the endpoint's result to
endpoint.py, and both end in the same outputs and completion (outputs.py).

A user's bad input (JobError) ends the job FAILED with its code and returns normally, so
Lambda does not retry it. Anything else is a fault: it is re-raised so Lambda's async retries
run, and the on-failure destination ends the job FAILED (PROCESSOR_CRASHED) after the last one.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from idp.contract import names
from idp.contract.errors import JobError, UnsupportedModel
from idp.contract.jobs import DispatchedJob, ProcessorTask, validate_language
from idp.contract.names import Backend, Service
from idp.contract.results import OcrResult
from idp.contract.timestamps import ms
from idp.contract.topology import PROCESSOR_TIMEOUT_SECONDS
from idp.document.ocr.pipeline import ocr_document
from idp.document.office.sheets import with_sheet_tables
from idp.document.text_layer.page import job_layer_reader, text_layer_reader
from idp.flow.chunks.plan import should_chunk
from idp.flow.result_cache import ResultCache, cache_key
from ocr_processor_image import chunked_job, endpoint
from ocr_processor_image.outcome import InvocationOutcome, InvocationStatus
from ocr_processor_image.outputs import InputDocument, fail_job, finish_job, read_document

if TYPE_CHECKING:
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
    """Run the step of `job` its event asks for. Re-raises only unexpected faults (for a retry).

    `invocation_id` (the Lambda request id, the same across retries of one async event) and
    `lease_seconds` (how long this invocation can run) keep a duplicate delivery of the event
    from working on the job while this invocation still may.
    """
    invocation_id = invocation_id or str(uuid.uuid4())
    lease_seconds = lease_seconds or PROCESSOR_TIMEOUT_SECONDS
    if job.task is ProcessorTask.ENDPOINT_RESULT:
        return endpoint.finish_from_endpoint(
            job, warm, invocation_id=invocation_id, lease_seconds=lease_seconds
        )
    if job.chunk is not None:
        return chunked_job.run_chunk(
            job, job.chunk, warm, invocation_id=invocation_id, lease_seconds=lease_seconds
        )
    return run_job(job, warm, invocation_id=invocation_id, lease_seconds=lease_seconds)


def run_job(  # noqa: PLR0911 - one return for each way a job's first invocation ends
    job: DispatchedJob, warm: WarmState, *, invocation_id: str, lease_seconds: float
) -> InvocationOutcome:
    """A new job: validate → plan → run its pages → write outputs → complete.

    Its pages are read in this invocation (PP-OCRv5, PP-StructureV3: the job goes PROCESSING
    here) or at the PaddleOCR-VL endpoint (the job stays QUEUED until the endpoint's result);
    a document longer than one chunk is read in chunks, wherever its pages are read.
    """
    at_endpoint = job.model.backend is Backend.SAGEMAKER
    if at_endpoint and warm.vl is None:
        error = UnsupportedModel(f"{job.model.value} is not available in this deployment")
        return fail_job(warm, job.job_id, error)
    if not at_endpoint and not warm.store.mark_processing(
        job.job_id, invocation_id=invocation_id, lease_seconds=lease_seconds
    ):
        logger.info("job %s is terminal or held by another invocation; skipped", job.job_id)
        return InvocationOutcome(job_id=job.job_id, status=InvocationStatus.SKIPPED)
    started = time.perf_counter()
    timings: dict[str, float] = {}
    try:
        # Validate: a bad file is refused before an engine is loaded or GPU time is spent.
        lang = validate_language(job.lang)
        document = read_document(job, warm, timings)

        # Plan: the same bytes read before with the same settings (CPU models); else one piece,
        # or chunks.
        content_sha256 = document.sha256
        content_key = None
        if not at_endpoint:
            content_key = cache_key(
                content_sha256=content_sha256, model=job.model, lang=lang, options=job.options
            )
            cached = ResultCache(warm.s3, warm.settings.results_bucket).get(content_key)
            if cached is not None:
                return _complete_from_cache(job, cached, document, warm, timings, started)
        chunk_pages = (
            endpoint.chunk_pages(warm) if at_endpoint else warm.settings.chunk_pages_for(job.model)
        )
        # A spreadsheet's pages are read whole (its sheets' cells become their tables); an
        # Office document for the endpoint goes as chunks, which carry its PDF, not the input.
        chunked = should_chunk(document.facts.page_count, chunk_pages) and not document.sheets
        converted_for_endpoint = at_endpoint and document.conversion is not None
        if converted_for_endpoint and not chunk_pages:
            chunk_pages = names.VL_MAX_PAGES  # chunking off: one chunk, as large as it may be
        if chunked or converted_for_endpoint:
            # Run the pages as chunks, each an invocation of its own (of this function, or of
            # the endpoint); the one that counts the last chunk merges.
            dispatch = warm.vl if at_endpoint else warm.chunks
            if dispatch is None:
                raise RuntimeError("a chunked document needs an invoker for its chunks")
            return chunked_job.fan_out(
                job,
                document,
                warm,
                content_key=content_key,
                dispatch=dispatch,
                chunk_pages=chunk_pages,
                invocation_id=invocation_id,
                timings=timings,
            )

        # Run the pages in one piece: at the endpoint (its result resumes the job), or here.
        if at_endpoint:
            return endpoint.submit_whole(
                job, document, warm, invocation_id=invocation_id, timings=timings
            )
        result = _read_pages(job, document, warm, lang=lang, timings=timings)

        # Write the outputs, then complete.
        return finish_job(
            job,
            result,
            document.data,
            warm,
            timings=timings,
            started=started,
            cache_key=content_key,
        )
    except JobError as error:
        return fail_job(warm, job.job_id, error, started=started)


def _read_pages(
    job: DispatchedJob,
    document: InputDocument,
    warm: WarmState,
    *,
    lang: str,
    timings: dict[str, float],
) -> OcrResult:
    """Every page read in this invocation by the warm engine of the job's model and language."""
    tick = time.perf_counter()
    engine = warm.engines.get(job.model, lang, job.options)
    timings["engine_load"] = ms(time.perf_counter() - tick)
    outcome = ocr_document(
        document.data,
        engine=engine,
        options=job.options,
        max_pages=warm.settings.max_pages,
        read_page=text_layer_reader(job),
        page_layer=job_layer_reader(job),
    )
    timings.update(outcome.timings_ms)
    return OcrResult.assemble(
        job_id=job.job_id,
        model=job.model.value,
        lang=lang,
        engine=engine.info,
        source=document.source(job),
        pages=with_sheet_tables(outcome.pages, document.sheets),
        timings_ms=timings,
    )


def _complete_from_cache(
    job: DispatchedJob,
    cached: OcrResult,
    document: InputDocument,
    warm: WarmState,
    timings: dict[str, float],
    started: float,
) -> InvocationOutcome:
    """The same bytes were read before with the same settings: reuse that result."""
    result = cached.model_copy(
        update={
            "job_id": job.job_id,
            "source": cached.source.model_copy(update={"bucket": job.bucket, "key": job.key}),
            "timings_ms": dict(timings),
            "cached": True,
        }
    )
    logger.info("job %s is completed from the result cache", job.job_id)
    return finish_job(
        job, result, document.data, warm, timings=timings, started=started, cached=True
    )
