"""PaddleOCR-VL jobs: count the document's pages, then submit it to the endpoint whole or in chunks.

The invoker has already scaled the endpoint out; this invocation loads no engine. It reads the
document once (so a damaged or oversized file fails here, before any GPU time), and then:
- up to one chunk's pages: one asynchronous inference of the whole document, claimed on the job
  record so a duplicate delivery of this event does not submit it twice;
- more: the document is split exactly as a CPU document is (fan_out.py), and each chunk becomes
  an inference of its own (idp/vl_submit.py). The endpoint's instance serves
  VL_MAX_CONCURRENT_INVOCATIONS of them at a time and queues the rest, so one large document
  keeps every slot busy, and each invocation stays well inside its InvocationTimeoutSeconds.
The completion handler counts the chunks' outputs and merges them (idp/fan_in.py).

The job stays QUEUED until the endpoint's result completes it, as a VL job always has: its wait
at the endpoint is covered by the stale-job sweep's QUEUED limit.
"""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from idp import names
from idp.aws.s3 import read_input
from idp.chunks import should_chunk
from idp.documents import open_document
from idp.errors import JobError
from idp.jobs import DispatchedJob, validate_language
from idp.names import Service
from idp.store import JobStore
from idp.vl_submit import VlEndpointSubmitter
from ocr_processor_image.fan_out import fan_out
from ocr_processor_image.outputs import InvocationOutcome, InvocationStatus, ms
from ocr_processor_image.settings import ProcessorSettings

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

logger = Logger(service=Service.PROCESSOR.value, child=True)


def vl_chunk_pages(settings: ProcessorSettings) -> int:
    """The processor's chunk size, capped by what one VL invocation may take (0: never chunk)."""
    return min(settings.chunk_pages, names.VL_MAX_PAGES)


def plan_vl(
    job: DispatchedJob,
    *,
    s3: S3Client,
    store: JobStore,
    settings: ProcessorSettings,
    endpoint: VlEndpointSubmitter,
    invocation_id: str,
) -> InvocationOutcome:
    """Submit `job` to the VL endpoint, whole or in chunks. Re-raises only unexpected faults."""
    started = time.perf_counter()
    timings: dict[str, float] = {}
    try:
        validate_language(job.lang)
        data = read_input(s3, job.bucket, job.key, max_bytes=settings.max_input_bytes)
        timings["download"] = ms(time.perf_counter() - started)
        with open_document(
            data, pdf_scale=job.options.pdf_scale, max_pages=settings.max_pages
        ) as document:
            facts = document.facts
    except JobError as error:
        logger.warning("job %s failed: %s %s", job.job_id, error.code, error.message)
        store.mark_failed(
            job.job_id, error, timings_ms={"total": ms(time.perf_counter() - started)}
        )
        return InvocationOutcome(
            job_id=job.job_id, status=InvocationStatus.FAILED, error=error.to_record()
        )

    chunk_pages = vl_chunk_pages(settings)
    if should_chunk(facts.page_count, chunk_pages):
        return fan_out(
            job,
            data,
            facts=facts,
            content_sha256=hashlib.sha256(data).hexdigest(),
            content_key=None,
            s3=s3,
            store=store,
            settings=settings,
            chunks=endpoint,
            invocation_id=invocation_id,
            timings=timings,
            chunk_pages=chunk_pages,
        )
    if not store.claim_submission(job.job_id, invocation_id=invocation_id):
        logger.info("job %s was submitted by another invocation or has ended", job.job_id)
        return InvocationOutcome(job_id=job.job_id, status=InvocationStatus.SKIPPED)
    submission = endpoint.submit(job)
    store.record_dispatch(job.job_id, **submission.facts(), pages_total=facts.page_count)
    logger.info("job %s submitted to %s: %d pages", job.job_id, endpoint.target, facts.page_count)
    return InvocationOutcome(
        job_id=job.job_id, status=InvocationStatus.SUBMITTED, timings_ms=timings
    )
