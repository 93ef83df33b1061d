"""Fan-out: a document longer than one chunk becomes page ranges OCR'd by invocations of their own.

In order, so that a crash anywhere is redone by the retry of this same invocation:
1. claim the fan-out on the job record (`JobStore.start_chunks`): totals and counters. A
   duplicate delivery of the job's event, from another invocation, stops here;
2. split: a PDF's page ranges are copied (not rendered) into one small PDF per chunk under
   work/<job_id>/chunks/, so a chunk downloads its own pages only. Other inputs (a multi-page
   TIFF) are read whole by each chunk, which decodes only its own frames;
3. write work/<job_id>/plan.json: what the merge needs (source facts, the cache key, chunks);
4. dispatch each chunk: a CPU model's to this function (an async invoke each; Lambda runs them
   in parallel, as many as its concurrency allows, and a throttled event waits in Lambda's async
   queue), PaddleOCR-VL's to the endpoint (an async inference each, idp/vl_submit.py; the
   instance serves several at once and queues the rest).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from idp.chunks import ChunkPlan, part_pdf_key, plan_chunks, plan_key
from idp.documents import DocumentFacts, open_document
from idp.jobs import DispatchedJob
from idp.lambda_invoke import ProcessorInvoker
from idp.names import MediaType, Service
from idp.results import SourceInfo
from idp.timestamps import ms
from ocr_processor_image.outputs import InvocationOutcome, InvocationStatus

if TYPE_CHECKING:
    from ocr_processor_image.warm_state import WarmState

logger = Logger(service=Service.PROCESSOR.value, child=True)


def fan_out(
    job: DispatchedJob,
    data: bytes,
    warm: WarmState,
    *,
    facts: DocumentFacts,
    content_sha256: str,
    content_key: str | None,
    chunks: ProcessorInvoker,
    invocation_id: str,
    timings: dict[str, float],
    chunk_pages: int | None = None,
) -> InvocationOutcome:
    """Split `job`'s document into chunks and dispatch them to `chunks`. The job keeps its
    status: PROCESSING for OCR chunks, QUEUED for VL chunks until the endpoint's results."""
    s3, store, settings = warm.s3, warm.store, warm.settings
    started = time.perf_counter()
    chunk_pages = chunk_pages or settings.chunk_pages
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
        with open_document(data, max_pages=settings.max_pages) as document:
            for chunk in planned:
                key = part_pdf_key(job.job_id, chunk.index)
                s3.put_object(
                    Bucket=settings.results_bucket,
                    Key=key,
                    Body=document.extract_pdf_pages(chunk.first_page, chunk.last_page),
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
        source=SourceInfo(
            bucket=job.bucket,
            key=job.key,
            sha256=content_sha256,
            media_type=facts.media_type.value,
            page_count=facts.page_count,
            size_bytes=len(data),
        ),
        cache_key=content_key,
        chunks=planned,
        split_ms=ms(time.perf_counter() - started),
    )
    s3.put_object(
        Bucket=settings.results_bucket,
        Key=plan_key(job.job_id),
        Body=plan.model_dump_json().encode(),
        ContentType="application/json",
    )
    tick = time.perf_counter()
    for chunk in planned:
        chunks.invoke_async(job.model_copy(update={"chunk": chunk}))
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
