"""End jobs from completion notifications: write the canonical result or record the failure.

Every notification is matched to its job by id (the SageMaker inference id is the job id; the
processor's failure record carries the `DispatchedJob`). Duplicates and late arrivals are
expected: a job that is already COMPLETED or FAILED is left exactly as it is, and a success
for a job still QUEUED (the VL path never marks PROCESSING) completes it.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError
from pydantic import ValidationError

from idp import names
from idp.aws.errors import is_missing_object
from idp.aws.s3 import parse_s3_uri, s3_uri
from idp.aws.telemetry import Telemetry
from idp.chunks import PartialResult
from idp.errors import InferenceFailure, JobError, ProcessorCrashed, error_from_code
from idp.fan_in import FanIn
from idp.job_record import JobRecord
from idp.jobs import DispatchedJob, JobOptions
from idp.names import JobStatus, Metric, OcrModel
from idp.results import OcrResult, result_key
from idp.store import JobStore
from idp.timestamps import parse_timestamp
from idp.vl_submit import ChunkManifest, chunk_of_manifest
from lambdas.completion.notifications import (
    AsyncInferenceNotification,
    LambdaDestinationRecord,
    parse_notification,
)

if TYPE_CHECKING:
    from aws_lambda_powertools import Logger
    from mypy_boto3_s3 import S3Client

    from idp.lambda_invoke import ProcessorInvoker

_EMBEDDED_JSON = re.compile(r"\{.*\}", re.DOTALL)
_MAX_REASON_CHARS = 1000


class Completion(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"
    CHUNK_COUNTED = "chunk-counted"  # one chunk of a large document; others still running
    ALREADY_FINISHED = "already-finished"  # a duplicate or late notification: nothing changed
    UNKNOWN_JOB = "unknown-job"
    IGNORED = "ignored"  # a message of neither known shape


@dataclass(frozen=True)
class CompletionOutcome:
    completion: Completion
    job_id: str | None = None
    error_code: str | None = None


@dataclass(frozen=True, kw_only=True)
class CompletionRecorder:
    """The completion handler's logic. Takes its S3 client, store and results bucket."""

    s3: S3Client
    store: JobStore
    results_bucket: str
    telemetry: Telemetry
    logger: Logger
    processor: ProcessorInvoker | None = None

    def _fan_in(self, job: JobRecord) -> FanIn:
        return FanIn(
            s3=self.s3,
            store=self.store,
            bucket=self.results_bucket,
            extra_outputs=lambda job_id, plan: self._request_searchable_pdf(job),
        )

    def _request_searchable_pdf(self, job: JobRecord) -> None:
        """Ask the processor for result.pdf (this zip function has no PDF libraries): it reads
        the input and result.json. Asked before the job completes, so a failed request is
        retried with the notification."""
        options = JobOptions.model_validate(job.get("options") or {})
        if self.processor is None or not options.searchable_pdf:
            return
        self.processor.invoke_async(
            DispatchedJob(
                job_id=job[names.JOB_ID_ATTR],
                bucket=job["input_bucket"],
                key=job["input_key"],
                model=OcrModel.parse(str(job["model"])),
                lang=str(job["lang"]),
                options=options,
                task="searchable_pdf",
            )
        )

    def handle_message(
        self, message: str, *, invocation_id: str | None = None
    ) -> CompletionOutcome:
        """One SNS message. AWS errors propagate so Lambda's async retries try it again.

        `invocation_id` (the Lambda request id, the same across retries of one event) lets the
        retry of a merge that crashed take its lease back at once.
        """
        notification = parse_notification(message)
        if notification is None:
            return self._ignore(
                "message is neither a SageMaker notification nor a Lambda record",
                sns_message=message[:_MAX_REASON_CHARS],
            )
        if isinstance(notification, AsyncInferenceNotification):
            return self._record_inference(notification, invocation_id=invocation_id)
        failed_job_id = notification.job_id
        if failed_job_id is None:
            return self._ignore(
                "failure record names no job", condition=notification.request_context.condition
            )
        with self.logger.append_context_keys(job_id=failed_job_id):
            job = self._active_job(failed_job_id)
            if isinstance(job, CompletionOutcome):
                return job
            return self.record_processor_failure(notification, job)

    def _record_inference(
        self, notification: AsyncInferenceNotification, *, invocation_id: str | None
    ) -> CompletionOutcome:
        """A SageMaker notification: of a whole document's inference, or of one chunk's."""
        chunk = chunk_of_manifest(notification.input_location)
        context: dict[str, Any] = {"job_id": notification.inference_id}
        if chunk is not None:
            context = {"job_id": chunk.job_id, "chunk": chunk.chunk_index}
        with self.logger.append_context_keys(**context):
            job = self._active_job(context["job_id"])
            if isinstance(job, CompletionOutcome):
                return job
            if chunk is not None:
                return self.record_chunk_outcome(
                    notification, chunk, job, invocation_id=invocation_id or str(uuid.uuid4())
                )
            if notification.succeeded:
                return self.record_inference_result(notification, job)
            return self.record_inference_failure(notification, job)

    def _ignore(self, reason: str, **extra: Any) -> CompletionOutcome:
        self.telemetry.count(Metric.IGNORED_NOTIFICATIONS)
        self.logger.error(reason, extra=extra)
        return CompletionOutcome(Completion.IGNORED)

    # -- SageMaker success --------------------------------------------------------------------
    def record_inference_result(
        self, notification: AsyncInferenceNotification, job: JobRecord
    ) -> CompletionOutcome:
        job_id = notification.inference_id
        if not notification.output_location:
            return self._fail(
                job_id, InferenceFailure("the VL endpoint reported success without an output")
            )
        body = self._read(notification.output_location)
        if body is None:
            return self._fail(
                job_id,
                InferenceFailure(
                    f"the VL endpoint's output {notification.output_location} is missing"
                ),
            )
        parsed = _parse_output(body)
        if isinstance(parsed, JobError):
            return self._fail(job_id, parsed, inference_output=notification.output_location)
        result = self._normalize(parsed, job=job, notification=notification)
        json_key = result_key(job_id)
        self.s3.put_object(
            Bucket=self.results_bucket,
            Key=json_key,
            Body=result.model_dump_json(indent=2).encode(),
            ContentType="application/json",
        )
        extra: dict[str, Any] = {}
        if result.markdown is not None:
            markdown_key = result_key(job_id, names.RESULT_MD)
            self.s3.put_object(
                Bucket=self.results_bucket,
                Key=markdown_key,
                Body=result.markdown.encode(),
                ContentType="text/markdown; charset=utf-8",
            )
            extra["markdown_uri"] = s3_uri(self.results_bucket, markdown_key)
        self._request_searchable_pdf(job)
        completed = self.store.mark_completed(
            job_id,
            result_uri=s3_uri(self.results_bucket, json_key),
            page_count=len(result.pages),
            timings_ms=result.timings_ms,
            engine=result.engine.model_dump(mode="json"),
            content_sha256=result.source.sha256,
            cached=result.cached,
            inference_output=notification.output_location,
            **extra,
        )
        if not completed:  # another delivery finished it between our read and this write
            return self._already_finished(job_id)
        self.telemetry.count(Metric.JOBS_COMPLETED, model=str(job.get("model", "")))
        self.logger.info(
            "job completed", extra={"pages": len(result.pages), "timings_ms": result.timings_ms}
        )
        return CompletionOutcome(Completion.COMPLETED, job_id)

    def _normalize(
        self, result: OcrResult, *, job: JobRecord, notification: AsyncInferenceNotification
    ) -> OcrResult:
        """The endpoint's result under this job's identity, with the pipeline's own timings."""
        source = result.source.model_copy(
            update={"bucket": job["input_bucket"], "key": job["input_key"]}
        )
        return result.model_copy(
            update={
                "job_id": job[names.JOB_ID_ATTR],
                "model": job["model"],
                "lang": job["lang"],
                "source": source,
                "timings_ms": pipeline_timings(job, notification, result.timings_ms),
            }
        )

    # -- SageMaker error ----------------------------------------------------------------------
    def record_inference_failure(
        self, notification: AsyncInferenceNotification, job: JobRecord
    ) -> CompletionOutcome:
        error, fields = self._inference_error(notification)
        return self._fail(notification.inference_id, error, **fields)

    def _inference_error(
        self, notification: AsyncInferenceNotification
    ) -> tuple[JobError, dict[str, Any]]:
        """The error a failed inference stands for, and what the job record keeps about it."""
        body = self._read(notification.failure_location) if notification.failure_location else None
        reason = notification.failure_reason or f"invocation {notification.invocation_status}"
        error = _reported_error(body) or _reported_error(reason.encode())
        if error is None:
            error = InferenceFailure(f"the VL endpoint failed: {reason[:_MAX_REASON_CHARS]}")
        fields: dict[str, Any] = {"failure_reason": reason[:_MAX_REASON_CHARS]}
        if notification.failure_location:
            fields["failure_uri"] = notification.failure_location
        return error, fields

    # -- SageMaker chunk of a large document ----------------------------------------------------
    def record_chunk_outcome(
        self,
        notification: AsyncInferenceNotification,
        ref: ChunkManifest,
        job: JobRecord,
        *,
        invocation_id: str,
    ) -> CompletionOutcome:
        """Count one chunk's output once (idp/fan_in.py) and merge when it is the last; a
        failed chunk fails the job, naming its pages."""
        job_id = ref.job_id
        chunk = self._fan_in(job).read_plan(job_id).chunks[ref.chunk_index]
        where = {"failed_pages": chunk.label}
        if not notification.succeeded:
            error, fields = self._inference_error(notification)
            return self._fail(job_id, error, **fields, **where)
        body = self._read(notification.output_location) if notification.output_location else None
        if body is None:
            missing = InferenceFailure(
                f"the VL endpoint's output for {chunk.label} is missing "
                f"({notification.output_location or 'no output location'})"
            )
            return self._fail(job_id, missing, **where)
        parsed = _parse_output(body)
        if isinstance(parsed, JobError):
            return self._fail(
                job_id, parsed, inference_output=notification.output_location, **where
            )
        fan_in = self._fan_in(job)
        counted = fan_in.commit(
            PartialResult(
                job_id=job_id,
                chunk=chunk,
                engine=parsed.engine,
                pages=parsed.pages,
                timings_ms=parsed.timings_ms,
            )
        )
        merged = fan_in.merge_if_complete(
            job_id,
            counted or job,
            invocation_id=invocation_id,
            lease_seconds=names.COMPLETION_TIMEOUT_SECONDS + 60,
        )
        if merged is None:
            self.logger.info("chunk counted", extra={"pages": chunk.label})
            return CompletionOutcome(Completion.CHUNK_COUNTED, job_id)
        self.telemetry.count(Metric.JOBS_COMPLETED, model=str(job.get("model", "")))
        self.logger.info("job completed from its chunks", extra={"pages": merged.pages})
        return CompletionOutcome(Completion.COMPLETED, job_id)

    # -- processor crash ------------------------------------------------------------------------
    def record_processor_failure(
        self, record: LambdaDestinationRecord, job: JobRecord
    ) -> CompletionOutcome:
        job_id = job[names.JOB_ID_ATTR]
        context = record.request_context
        attempts = max(int(job.get("attempts", 0)), context.approximate_invoke_count)
        summary = record.error_summary
        chunk = record.chunk
        where = ""
        fields: dict[str, Any] = {}
        if chunk is not None:
            # A chunk's invocation: name its pages, or the merge if the chunk had been counted.
            attempts = context.approximate_invoke_count
            merged_here = chunk.index in job.get("chunks_committed", [])
            where = (
                f" merging the result (after {chunk.label})"
                if merged_here
                else (f" on {chunk.label}")
            )
            fields["failed_pages"] = chunk.label
        if context.condition == "EventAgeExceeded":
            message = (
                f"the OCR processor did not finish{where} before the maximum event age "
                f"({attempts} attempts)"
            )
        elif context.condition == "RetriesExhausted":
            message = f"the OCR processor failed{where} on all {attempts} attempts"
        else:
            message = (
                f"the OCR processor's invocation failed{where} ({context.condition}) "
                f"after {attempts} attempts"
            )
        if summary:
            message = f"{message}: {summary[:_MAX_REASON_CHARS]}"
        return self._fail(
            job_id,
            ProcessorCrashed(message),
            attempts=attempts,
            failure_condition=context.condition,
            **fields,
        )

    # -- shared -----------------------------------------------------------------------------------
    def _active_job(self, job_id: str) -> JobRecord | CompletionOutcome:
        job = self.store.get(job_id)
        if job is None:
            self.telemetry.count(Metric.IGNORED_NOTIFICATIONS)
            self.logger.warning("notification for a job that does not exist")
            return CompletionOutcome(Completion.UNKNOWN_JOB, job_id)
        if JobStatus(job["status"]).is_terminal:
            return self._already_finished(job_id, status=job["status"])
        return job

    def _already_finished(self, job_id: str, *, status: str | None = None) -> CompletionOutcome:
        self.logger.info(
            "job already finished; duplicate or late notification ignored", extra={"status": status}
        )
        return CompletionOutcome(Completion.ALREADY_FINISHED, job_id)

    def _fail(self, job_id: str, error: JobError, **fields: Any) -> CompletionOutcome:
        if not self.store.mark_failed(job_id, error, **fields):
            return self._already_finished(job_id)
        self.telemetry.job_failed(error.code)
        self.logger.warning("job failed", extra={"error_code": error.code, "reason": error.message})
        return CompletionOutcome(Completion.FAILED, job_id, error.code)

    def _read(self, uri: str) -> bytes | None:
        """The object's bytes, or None when it does not exist."""
        bucket, key = parse_s3_uri(uri)
        try:
            return self.s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        except ClientError as exc:
            if is_missing_object(exc):
                return None
            raise


def _parse_output(body: bytes) -> OcrResult | JobError:
    """The endpoint's output as a result, or the error it stands for."""
    try:
        payload = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return InferenceFailure("the VL endpoint's output is not JSON")
    reported = _error_body(payload)
    if reported is not None:
        return reported
    try:
        return OcrResult.model_validate(payload)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'result'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        return InferenceFailure(f"the VL endpoint's output is not a valid result: {problems}")


def _reported_error(body: bytes | None) -> JobError | None:
    """A `{"error": {"code", "message"}}` body, whole or embedded in a longer text."""
    if not body:
        return None
    text = body.decode(errors="replace")
    candidates = [text]
    embedded = _EMBEDDED_JSON.search(text)
    if embedded:
        candidates.append(embedded.group(0))
    for candidate in candidates:
        try:
            payload = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        error = _error_body(payload)
        if error is not None:
            return error
    return None


def _error_body(payload: Any) -> JobError | None:
    if not isinstance(payload, dict) or not isinstance(payload.get("error"), dict):
        return None
    code, message = payload["error"].get("code"), payload["error"].get("message")
    if not isinstance(code, str) or not code:
        return None
    return error_from_code(code, str(message or code))


def pipeline_timings(
    job: JobRecord, notification: AsyncInferenceNotification, container: dict[str, float]
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
    received, finished = notification.received_time, notification.event_time
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
