"""End jobs from completion notifications: record failures, hand the endpoint's results on.

Every notification is matched to its job by id (the SageMaker inference id is the job id, or a
chunk's manifest names its job; the processor's failure record carries the `DispatchedJob`):

- a successful inference (a whole VL document, or one chunk of a long one) is handed to the OCR
  processor (task ENDPOINT_RESULT), which writes the result, or commits the chunk and merges the
  last one, exactly as it does for the pages it reads itself (ocr_processor_image/endpoint.py);
- a failed inference ends the job FAILED with the error the container reported (naming the
  chunk's pages for a chunk);
- a processor invocation that failed on every attempt ends the job FAILED (PROCESSOR_CRASHED).

Duplicates and late arrivals are expected: a job that is already COMPLETED or FAILED is left
exactly as it is, and handing the same result to the processor twice is harmless (it counts a
chunk once and completes a job once).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError
from pydantic import ValidationError

from idp.aws.errors import is_missing_object
from idp.aws.s3 import parse_s3_uri
from idp.aws.telemetry import Telemetry
from idp.contract import names
from idp.contract.errors import InferenceFailure, JobError, ProcessorCrashed
from idp.contract.job_record import JobRecord
from idp.contract.jobs import ChunkSpec, DispatchedJob, JobOptions, ProcessorTask, parse_model
from idp.contract.names import JobStatus, Metric
from idp.flow.chunks.plan import ChunkPlan, plan_key
from idp.flow.inbound.destination_records import LambdaDestinationRecord
from idp.flow.inbound.endpoint_notifications import AsyncInferenceNotification, reported_error
from idp.flow.vl_submit import ChunkManifest, chunk_of_manifest
from idp.jobstore.store import JobStore

if TYPE_CHECKING:
    from aws_lambda_powertools import Logger
    from mypy_boto3_s3 import S3Client

    from idp.flow.lambda_invoke import ProcessorInvoker

_MAX_REASON_CHARS = 1000


class Completion(StrEnum):
    HANDED_OVER = "handed-over"  # a successful inference, handed to the processor to finish
    FAILED = "failed"
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
    """The completion handler's logic: its S3 client (failure objects, chunk plans), the job
    store, the processor it hands results to, and where the chunk plans live."""

    s3: S3Client
    store: JobStore
    processor: ProcessorInvoker
    results_bucket: str
    telemetry: Telemetry
    logger: Logger

    def handle_message(self, message: str) -> CompletionOutcome:
        """One SNS message. AWS errors propagate so Lambda's async retries try it again."""
        notification = parse_notification(message)
        if notification is None:
            return self._ignore(
                "message is neither a SageMaker notification nor a Lambda record",
                sns_message=message[:_MAX_REASON_CHARS],
            )
        if isinstance(notification, AsyncInferenceNotification):
            return self._record_inference(notification)
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

    def _record_inference(self, notification: AsyncInferenceNotification) -> CompletionOutcome:
        """A SageMaker notification: of a whole document's inference, or of one chunk's."""
        ref = chunk_of_manifest(notification.input_location)
        context: dict[str, Any] = {"job_id": notification.inference_id}
        if ref is not None:
            context = {"job_id": ref.job_id, "chunk": ref.chunk_index}
        with self.logger.append_context_keys(**context):
            job = self._active_job(context["job_id"])
            if isinstance(job, CompletionOutcome):
                return job
            chunk = self._chunk(ref) if ref is not None else None
            if notification.succeeded:
                return self.hand_over(notification, job, chunk)
            return self.record_inference_failure(notification, job, chunk)

    def _ignore(self, reason: str, **extra: Any) -> CompletionOutcome:
        self.telemetry.count(Metric.IGNORED_NOTIFICATIONS)
        self.logger.error(reason, extra=extra)
        return CompletionOutcome(Completion.IGNORED)

    def _chunk(self, ref: ChunkManifest) -> ChunkSpec:
        """The chunk a manifest names, from its job's plan (work/<job_id>/plan.json)."""
        body = self.s3.get_object(Bucket=self.results_bucket, Key=plan_key(ref.job_id))["Body"]
        return ChunkPlan.model_validate_json(body.read()).chunks[ref.chunk_index]

    # -- SageMaker success ------------------------------------------------------------------------
    def hand_over(
        self, notification: AsyncInferenceNotification, job: JobRecord, chunk: ChunkSpec | None
    ) -> CompletionOutcome:
        """The processor finishes the job (or counts the chunk) from the endpoint's output."""
        job_id = job[names.JOB_ID_ATTR]
        self.processor.invoke_async(
            DispatchedJob(
                job_id=job_id,
                bucket=job["input_bucket"],
                key=job["input_key"],
                model=parse_model(job["model"]),
                lang=str(job["lang"]),
                options=JobOptions.model_validate(job.get("options") or {}),
                owner=job.get("owner"),
                chunk=chunk,
                task=ProcessorTask.ENDPOINT_RESULT,
                endpoint_result=notification.result(),
            )
        )
        self.logger.info(
            "inference handed to the processor",
            extra={"output": notification.output_location, "pages": chunk and chunk.label},
        )
        return CompletionOutcome(Completion.HANDED_OVER, job_id)

    # -- SageMaker error ----------------------------------------------------------------------
    def record_inference_failure(
        self, notification: AsyncInferenceNotification, job: JobRecord, chunk: ChunkSpec | None
    ) -> CompletionOutcome:
        """The job fails with the error the container reported (naming a chunk's pages)."""
        body = self._read(notification.failure_location) if notification.failure_location else None
        reason = notification.failure_reason or f"invocation {notification.invocation_status}"
        error = reported_error(body) or reported_error(reason.encode())
        if error is None:
            error = InferenceFailure(f"the VL endpoint failed: {reason[:_MAX_REASON_CHARS]}")
        fields: dict[str, Any] = {"failure_reason": reason[:_MAX_REASON_CHARS]}
        if notification.failure_location:
            fields["failure_uri"] = notification.failure_location
        if chunk is not None:
            fields["failed_pages"] = chunk.label
        return self._fail(job[names.JOB_ID_ATTR], error, **fields)

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


Notification = AsyncInferenceNotification | LambdaDestinationRecord


def parse_notification(message: str) -> Notification | None:
    """The typed notification in an SNS message, or None for a message of neither shape."""
    try:
        payload = json.loads(message)
    except json.JSONDecodeError:
        return None
    if not isinstance(payload, dict):
        return None
    try:
        if "invocationStatus" in payload:
            return AsyncInferenceNotification.model_validate(payload)
        if "requestContext" in payload:
            return LambdaDestinationRecord.model_validate(payload)
    except ValidationError:
        return None
    return None
