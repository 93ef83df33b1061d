"""PaddleOCR-VL jobs: their pages are read at the endpoint, and their result is finished here.

Submitting (from job.run_job): the invoker has already scaled the endpoint out; the job's first
invocation loads no engine. It reads the document once (so a damaged or
oversized file fails before any GPU time), and then:
- up to one chunk's pages: one asynchronous inference of the whole document, claimed on the job
  record so a duplicate delivery of the event does not submit it twice;
- more: the document is split exactly as a CPU document is (chunked_job.py), and each chunk becomes
  an inference of its own (idp/flow/vl_submit.py). The endpoint's instance serves
  VL_MAX_CONCURRENT_INVOCATIONS of them at a time and queues the rest, so one large document
  keeps every slot busy, and each invocation stays well inside its InvocationTimeoutSeconds.
The job stays QUEUED until its result completes it, as a VL job always has: its wait at the
endpoint is covered by the stale-job sweep's QUEUED limit.

Finishing (`finish_from_endpoint`): the completion handler hands every successful inference to
the processor (task ENDPOINT_RESULT). A whole document's output becomes its result, written and
completed like any other; a chunk's output is that chunk's pages, committed like a CPU chunk's,
and the invocation that counts the last one merges (chunked_job.py). A failed inference is the
completion handler's to record.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger
from botocore.exceptions import ClientError

from idp.aws.errors import is_missing_object
from idp.aws.s3 import parse_s3_uri, read_input
from idp.contract import names
from idp.contract.errors import InferenceFailure, JobError
from idp.contract.jobs import DispatchedJob, EndpointResult
from idp.contract.names import JobStatus, Service
from idp.contract.results import OcrResult
from idp.contract.timestamps import ms, parse_timestamp
from idp.flow.chunks.plan import PartialResult
from idp.flow.inbound.endpoint_notifications import parse_output
from ocr_processor_image import chunked_job
from ocr_processor_image.outcome import InvocationOutcome, InvocationStatus
from ocr_processor_image.outputs import InputDocument, fail_job, finish_job

if TYPE_CHECKING:
    from idp.contract.job_record import JobRecord
    from ocr_processor_image.warm_state import WarmState

logger = Logger(service=Service.PROCESSOR.value, child=True)


def chunk_pages(warm: WarmState) -> int:
    """The processor's chunk size, capped by what one VL invocation may take (0: never)."""
    return min(warm.settings.chunk_pages, names.VL_MAX_PAGES)


def submit_whole(
    job: DispatchedJob,
    document: InputDocument,
    warm: WarmState,
    *,
    invocation_id: str,
    timings: dict[str, float],
) -> InvocationOutcome:
    """One inference of the whole document; its result resumes the job (`finish_from_endpoint`)."""
    if warm.vl is None:
        raise RuntimeError("a PaddleOCR-VL job needs the endpoint's submitter")
    if not warm.store.claim_submission(job.job_id, invocation_id=invocation_id):
        logger.info("job %s was submitted by another invocation or has ended", job.job_id)
        return InvocationOutcome(job_id=job.job_id, status=InvocationStatus.SKIPPED)
    submission = warm.vl.submit(job)
    pages = document.facts.page_count
    warm.store.record_dispatch(job.job_id, **submission.facts(), pages_total=pages)
    logger.info("job %s submitted to %s: %d pages", job.job_id, warm.vl.target, pages)
    return InvocationOutcome(
        job_id=job.job_id, status=InvocationStatus.SUBMITTED, timings_ms=timings
    )


def finish_from_endpoint(
    job: DispatchedJob, warm: WarmState, *, invocation_id: str, lease_seconds: float
) -> InvocationOutcome:
    """The endpoint read the job's pages (or one chunk's): write the result, or commit the
    chunk and merge when it is the last."""
    outcome = job.endpoint_result
    if outcome is None:
        raise ValueError(f"job {job.job_id}: an endpoint-result event without its result")
    if job.chunk is not None:
        chunk = job.chunk

        def read() -> PartialResult:
            started = time.perf_counter()
            result = _read_output(outcome, warm, what=chunk.label)
            timings = dict(result.timings_ms)
            if job.options.searchable_pdf:
                timings["searchable_pdf"] = chunked_job.write_chunk_pdf(
                    job, chunk, warm, pages=result.pages
                )
            timings["finish"] = ms(time.perf_counter() - started)
            return PartialResult(
                job_id=job.job_id,
                chunk=chunk,
                engine=result.engine,
                pages=result.pages,
                timings_ms=timings,
            )

        return chunked_job.commit_chunk(
            job, chunk, read, warm, invocation_id=invocation_id, lease_seconds=lease_seconds
        )
    record = warm.store.get(job.job_id)
    if record is None or JobStatus(record["status"]).is_terminal:
        logger.info("job %s has ended; the endpoint's result is not needed", job.job_id)
        return InvocationOutcome(job_id=job.job_id, status=InvocationStatus.SKIPPED)
    try:
        return _finish_whole(job, outcome, record, warm)
    except JobError as error:
        return fail_job(warm, job.job_id, error, inference_output=outcome.output_location)


def _finish_whole(
    job: DispatchedJob, outcome: EndpointResult, record: JobRecord, warm: WarmState
) -> InvocationOutcome:
    output = _read_output(outcome, warm, what="the document")
    timings = pipeline_timings(record, outcome, output.timings_ms)
    result = output.model_copy(
        update={
            "job_id": job.job_id,
            "model": job.model.value,
            "lang": job.lang,
            "source": output.source.model_copy(update={"bucket": job.bucket, "key": job.key}),
            "timings_ms": dict(timings),
        }
    )
    data = read_input(warm.s3, job.bucket, job.key, max_bytes=warm.settings.max_input_bytes)
    return finish_job(
        job,
        result,
        data,
        warm,
        timings=timings,
        cached=result.cached,
        inference_output=outcome.output_location,
    )


def _read_output(outcome: EndpointResult, warm: WarmState, *, what: str) -> OcrResult:
    """The inference's output as a result; InferenceFailure (or the error it reports) else."""
    location = outcome.output_location
    if not location:
        raise InferenceFailure(f"the VL endpoint reported success for {what} without an output")
    bucket, key = parse_s3_uri(location)
    # The endpoint writes only under its own output prefix (infra/vl_endpoint.py): a location
    # elsewhere is no output of ours, whoever sent the notification.
    if bucket != warm.settings.results_bucket or not key.startswith(names.VL_OUTPUT_PREFIX):
        raise InferenceFailure(
            f"the VL endpoint's output for {what} is not under its output prefix ({location})"
        )
    try:
        body = warm.s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    except ClientError as exc:
        if is_missing_object(exc):
            raise InferenceFailure(
                f"the VL endpoint's output for {what} is missing ({location})"
            ) from None
        raise
    parsed = parse_output(body)
    if isinstance(parsed, JobError):
        raise parsed
    return parsed


def pipeline_timings(
    job: JobRecord, outcome: EndpointResult, container: dict[str, float]
) -> dict[str, float]:
    """The container's stage timings plus where the rest of the time went.

    - dispatch: job created → the invoker confirmed the dispatch;
    - inference: the container's own total (else the endpoint's received → finished time);
    - endpoint_queue: time the request waited at the endpoint (backlog, scale-out cold start);
    - end_to_end: job created → the endpoint finished.
    """
    timings = dict(container)
    created = _timestamp(job.get("created_at"))
    dispatched = _timestamp(job.get("dispatch_confirmed_at") or job.get("dispatched_at"))
    received, finished = outcome.received_time, outcome.event_time
    if created and dispatched:
        timings["dispatch"] = _ms_between(created, dispatched)
    if received and finished:
        at_endpoint = _ms_between(received, finished)
        inference = container.get("total", at_endpoint)
        timings["inference"] = inference
        timings["endpoint_queue"] = max(0.0, round(at_endpoint - inference, 1))
    if created and finished:
        timings["end_to_end"] = _ms_between(created, finished)
    return timings


def _timestamp(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _ms_between(start: datetime, end: datetime) -> float:
    return max(0.0, round((end - start).total_seconds() * 1000, 1))
