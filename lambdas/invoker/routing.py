"""Turn job messages into QUEUED jobs and route each to its backend exactly once.

Per message: read it (`idp.contract.jobs.read_message`), then for each job it names:

1. admit: the model can run in this deployment, the input exists, is not empty and not too
   large, the language is known (explicit, else the object's `x-amz-meta-lang`, else the
   default); the job id is the explicit one or derived from the object version;
2. record: `JobStore.create` writes QUEUED (False on a redelivery, which is fine);
3. claim: `JobStore.claim_dispatch` lets exactly one delivery dispatch; the others stop here;
4. dispatch: an async invoke of the processor, which runs PP-OCRv5 / PP-StructureV3 itself and
   submits PaddleOCR-VL to the endpoint (whole or in chunks: it can count pages); a VL job
   first scales the endpoint out from zero. Then `record_dispatch` confirms.

Outcomes, by kind of error:
- a user error (`JobError`) ends the job FAILED at once and the message is done: a retry
  could not change the answer. A job that failed admission is written FAILED directly, under
  its deterministic id, so the user finds the reason in the status table.
- a message that names no input at all (not JSON, no bucket/key) has no job to fail:
  `InvalidMessage` propagates, the record is reported as a batch item failure and, after the
  queue's maxReceiveCount, lands in the dead-letter queue.
- any other failure while dispatching (throttling, a busy endpoint, a bug) gives the claim back
  and propagates, so SQS redelivers the message after its visibility timeout; transient AWS
  errors are raised as `TransientError`. The job stays QUEUED, never lost.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from idp.aws.endpoint import ScaleResult
from idp.aws.errors import describe_error, error_code, is_not_found, is_transient
from idp.aws.s3 import s3_uri
from idp.aws.telemetry import Telemetry
from idp.contract import names
from idp.contract.errors import (
    EmptyInput,
    InputNotFound,
    InputTooLarge,
    JobError,
    TransientError,
    UnsupportedModel,
)
from idp.contract.jobs import (
    DispatchedJob,
    JobItem,
    JobRequest,
    RejectedJob,
    derive_job_id,
    validate_language,
)
from idp.contract.languages import DEFAULT_LANGUAGE
from idp.contract.names import Backend, Metric, OcrModel
from idp.contract.producers import ProducerPrefixes
from idp.flow.inbound.job_queue import read_message
from idp.jobstore.store import DEFAULT_DISPATCH_LEASE_SECONDS, JobStore

if TYPE_CHECKING:
    from aws_lambda_powertools import Logger
    from mypy_boto3_s3 import S3Client

    from idp.flow.lambda_invoke import ProcessorInvoker
    from lambdas.invoker.dispatch import VlEndpointDispatcher

_FORBIDDEN_CODES = frozenset({"403", "AccessDenied", "Forbidden"})


class Disposition(StrEnum):
    DISPATCHED = "dispatched"  # this delivery handed the job to its backend
    DUPLICATE = "duplicate"  # another delivery already dispatched (or finished) the job
    REJECTED = "rejected"  # the job ended FAILED with a user error
    CONFLICT = "conflict"  # the explicit job id already names a different job; ignored


@dataclass(frozen=True)
class JobOutcome:
    job_id: str
    disposition: Disposition
    error_code: str | None = None


@dataclass(frozen=True)
class InputObject:
    """What HeadObject tells about an input."""

    size: int
    version: str
    lang: str | None


@dataclass(frozen=True, kw_only=True)
class JobRouter:
    """The invoker's logic. Takes its clients, store and backends; reads no environment."""

    s3: S3Client
    store: JobStore
    processor: ProcessorInvoker
    vl: VlEndpointDispatcher | None
    max_input_bytes: int
    telemetry: Telemetry
    logger: Logger
    dispatch_lease_seconds: int = DEFAULT_DISPATCH_LEASE_SECONDS
    producers: ProducerPrefixes = field(default_factory=ProducerPrefixes)  # one domain: any key

    # -- entry points ---------------------------------------------------------------------------
    def handle_message(self, body: str, *, sender: str | None = None) -> list[JobOutcome]:
        """All jobs of one SQS message body, sent by `sender` (its SenderId). Raises
        InvalidMessage when it names no input."""
        return [self.submit(item) for item in read_message(body, sender=sender)]

    def submit(self, item: JobItem) -> JobOutcome:
        if isinstance(item, RejectedJob):
            return self._reject(item)
        return self._submit_request(item)

    # -- admission ------------------------------------------------------------------------------
    def _submit_request(self, request: JobRequest) -> JobOutcome:
        found: InputObject | None = None
        try:
            self.producers.check(request.owner, request.key)
            self._check_backend(request.model)
            found = self._inspect_input(request)
            lang = validate_language(request.lang or found.lang or DEFAULT_LANGUAGE)
        except JobError as error:
            return self._reject(
                RejectedJob(
                    bucket=request.bucket,
                    key=request.key,
                    error=error,
                    model=request.model.value,
                    lang=request.lang or (found.lang if found else None),
                    explicit_job_id=request.job_id,
                    options=request.options.canonical(),
                    object_version=request.object_version or (found.version if found else None),
                    origin=request.origin,
                    owner=request.owner,
                )
            )
        version = request.object_version or found.version
        job_id = request.job_id or derive_job_id(request, object_version=version, lang=lang)
        job = DispatchedJob(
            job_id=job_id,
            bucket=request.bucket,
            key=request.key,
            model=request.model,
            lang=lang,
            options=request.options,
            owner=request.owner,
        )
        with self.logger.append_context_keys(job_id=job_id, model=job.model.value):
            return self._record_and_dispatch(
                job,
                object_version=version,
                origin=request.origin,
                size=found.size,
                owner=request.owner,
            )

    def _check_backend(self, model: OcrModel) -> None:
        if model.backend is Backend.SAGEMAKER and self.vl is None:
            raise UnsupportedModel(
                f"{model.value} is not available: this stack was deployed without the "
                "PaddleOCR-VL endpoint (VL disabled); use PP-OCRv5 or PP-StructureV3, or "
                "redeploy with VL enabled"
            )

    def _inspect_input(self, request: JobRequest) -> InputObject:
        where = s3_uri(request.bucket, request.key)
        try:
            head = self.s3.head_object(Bucket=request.bucket, Key=request.key)
        except ClientError as exc:
            if is_not_found(exc):
                raise InputNotFound(f"input {where} does not exist") from None
            if error_code(exc) in _FORBIDDEN_CODES:
                raise InputNotFound(
                    f"input {where} does not exist or the pipeline is not allowed to read it"
                ) from None
            raise
        size = int(head.get("ContentLength", 0))
        if size == 0:
            raise EmptyInput(f"input {where} is empty (0 bytes)")
        if size > self.max_input_bytes:
            raise InputTooLarge(
                f"input {where} is {size} bytes; the limit is {self.max_input_bytes} bytes"
            )
        version_id = head.get("VersionId")
        version = (
            version_id if version_id and version_id != "null" else head.get("ETag", "").strip('"')
        )
        metadata_lang = head.get("Metadata", {}).get(names.INPUT_LANG_METADATA_KEY)
        return InputObject(size=size, version=version, lang=metadata_lang or None)

    def _reject(self, rejected: RejectedJob) -> JobOutcome:
        job_id, error = rejected.job_id, rejected.error
        with self.logger.append_context_keys(job_id=job_id):
            created = self.store.create_failed(
                job_id=job_id,
                error=error,
                model=rejected.model,
                lang=rejected.lang,
                input_bucket=rejected.bucket,
                input_key=rejected.key,
                options=_options_record(rejected.options),
                object_version=rejected.object_version,
                origin=rejected.origin,
                **_owned(rejected.owner),
            )
            if created:
                self.telemetry.job_failed(error.code)
                self.logger.warning(
                    "job rejected", extra={"error_code": error.code, "reason": error.message}
                )
            else:
                self.logger.info("rejected job already recorded (redelivery)")
        return JobOutcome(job_id, Disposition.REJECTED, error.code)

    # -- record, claim, dispatch ----------------------------------------------------------------
    def _record_and_dispatch(
        self,
        job: DispatchedJob,
        *,
        object_version: str,
        origin: str,
        size: int,
        owner: str | None,
    ) -> JobOutcome:
        created = self.store.create(
            job_id=job.job_id,
            model=job.model,
            lang=job.lang,
            input_bucket=job.bucket,
            input_key=job.key,
            options=job.options.model_dump(mode="json"),
            object_version=object_version,
            origin=origin,
            input_size_bytes=size,
            **_owned(owner),
        )
        if not created and not self._is_same_job(job):
            self.logger.warning("job id already names a different job; this message is ignored")
            return JobOutcome(job.job_id, Disposition.CONFLICT)
        if not self.store.claim_dispatch(job.job_id, lease_seconds=self.dispatch_lease_seconds):
            self.telemetry.count(Metric.DUPLICATE_DELIVERIES)
            self.logger.info("job already dispatched or finished; nothing to do")
            return JobOutcome(job.job_id, Disposition.DUPLICATE)
        try:
            facts = self._dispatch(job)
        except JobError as error:
            self.store.mark_failed(job.job_id, error)
            self.telemetry.job_failed(error.code)
            self.logger.warning(
                "job failed at dispatch", extra={"error_code": error.code, "reason": error.message}
            )
            return JobOutcome(job.job_id, Disposition.REJECTED, error.code)
        except Exception as exc:
            self._give_back_claim(job.job_id, exc)
            if is_transient(exc):
                self.telemetry.count(Metric.DISPATCH_RETRIES, model=job.model.value)
                self.logger.warning(
                    "transient dispatch failure; the message will be retried",
                    extra={"reason": describe_error(exc)},
                )
                raise TransientError(describe_error(exc)) from exc
            self.logger.exception("dispatch failed; the message will be retried")
            raise
        # A failure from here on is retried like any other, and the redelivery finds the claim
        # held (a confirmed dispatch, or a lease that outlives it): the job never runs twice.
        self.store.record_dispatch(job.job_id, **facts)
        self.telemetry.job_routed(job.model.value)
        self.logger.info("job dispatched", extra=facts)
        return JobOutcome(job.job_id, Disposition.DISPATCHED)

    def _dispatch(self, job: DispatchedJob) -> dict[str, Any]:
        if job.model.backend is Backend.SAGEMAKER:
            if self.vl is None:  # admission already rejected this; kept for type narrowing
                raise UnsupportedModel(f"{job.model.value} is not available in this deployment")
            # Capacity first (minutes to come up from zero); the processor then counts the
            # document's pages and submits it to the endpoint, whole or in chunks.
            scale_out = self.vl.ensure_capacity()
            if scale_out.result is ScaleResult.CHANGED:
                self.telemetry.count(Metric.ENDPOINT_SCALE_OUT)
                self.logger.info("VL endpoint scaled out from zero to one instance")
            self.processor.invoke_async(job)
            return {
                "dispatch_target": self.processor.target,
                "vl_endpoint": self.vl.target,
                "endpoint_scale_out": scale_out.result.value,
            }
        self.processor.invoke_async(job)
        return {"dispatch_target": self.processor.target}

    def _give_back_claim(self, job_id: str, cause: BaseException) -> None:
        try:
            self.store.release_dispatch(job_id, reason=describe_error(cause))
        except Exception:
            # The claim is a lease: the redelivery can take it over once it expires.
            self.logger.exception("could not release the dispatch claim; it will expire")

    def _is_same_job(self, job: DispatchedJob) -> bool:
        """Whether the existing record under this id is this job (a redelivery).

        Derived ids always match; an explicit id reused for another input, model, language
        or options must not dispatch this message under the other job's record.
        """
        existing = self.store.get(job.job_id)
        same = existing is not None and (
            existing.get("input_uri") == s3_uri(job.bucket, job.key)
            and existing.get("model") == job.model.value
            and existing.get("lang") == job.lang
            and existing.get("options") == job.options.model_dump(mode="json")
        )
        if same:
            self.logger.info("job already recorded (redelivery)")
        return same


def _options_record(options: str) -> dict[str, Any] | None:
    try:
        parsed = json.loads(options) if options else None
    except json.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _owned(owner: str | None) -> dict[str, str]:
    """The record's `owner` field, when the sender is known."""
    return {"owner": owner} if owner else {}
