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
from idp.chunks import should_chunk
from idp.errors import JobError
from idp.jobs import DispatchedJob, validate_language
from idp.names import Service
from ocr_processor_image.fan_out import fan_out
from ocr_processor_image.outputs import InvocationOutcome, InvocationStatus, fail_job, read_document

if TYPE_CHECKING:
    from idp.vl_submit import VlEndpointSubmitter
    from ocr_processor_image.settings import ProcessorSettings
    from ocr_processor_image.warm_state import WarmState

logger = Logger(service=Service.PROCESSOR.value, child=True)


def vl_chunk_pages(settings: ProcessorSettings) -> int:
    """The processor's chunk size, capped by what one VL invocation may take (0: never chunk)."""
    return min(settings.chunk_pages, names.VL_MAX_PAGES)


def plan_vl(
    job: DispatchedJob,
    warm: WarmState,
    *,
    endpoint: VlEndpointSubmitter,
    invocation_id: str,
) -> InvocationOutcome:
    """Submit `job` to the VL endpoint, whole or in chunks. Re-raises only unexpected faults."""
    started = time.perf_counter()
    timings: dict[str, float] = {}
    try:
        validate_language(job.lang)
        data, facts = read_document(job, warm, timings)
    except JobError as error:
        return fail_job(warm.store, job.job_id, error, started=started)

    chunk_pages = vl_chunk_pages(warm.settings)
    if should_chunk(facts.page_count, chunk_pages):
        return fan_out(
            job,
            data,
            warm,
            facts=facts,
            content_sha256=hashlib.sha256(data).hexdigest(),
            content_key=None,
            chunks=endpoint,
            invocation_id=invocation_id,
            timings=timings,
            chunk_pages=chunk_pages,
        )
    if not warm.store.claim_submission(job.job_id, invocation_id=invocation_id):
        logger.info("job %s was submitted by another invocation or has ended", job.job_id)
        return InvocationOutcome(job_id=job.job_id, status=InvocationStatus.SKIPPED)
    submission = endpoint.submit(job)
    warm.store.record_dispatch(job.job_id, **submission.facts(), pages_total=facts.page_count)
    logger.info("job %s submitted to %s: %d pages", job.job_id, endpoint.target, facts.page_count)
    return InvocationOutcome(
        job_id=job.job_id, status=InvocationStatus.SUBMITTED, timings_ms=timings
    )
