"""Where a validated job goes: the PaddleOCR-VL async endpoint (the OCR processor Lambda is
invoked through idp.lambda_invoke, which the processor's own fan-out shares)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from idp import names
from idp.jobs import DispatchedJob
from lambdas.common.alarms import AlarmRearm
from lambdas.common.aws import s3_uri
from lambdas.common.endpoint import EndpointCapacity, ScaleResult, VariantState

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sagemaker_runtime import SageMakerRuntimeClient


@dataclass(frozen=True)
class VlSubmission:
    """What the job record keeps about an accepted asynchronous inference."""

    inference_id: str
    manifest_uri: str
    output_location: str
    failure_location: str | None
    scale_out: ScaleResult
    capacity_before: VariantState


class EndpointUnavailable(RuntimeError):
    """The VL endpoint is in a state (Failed, OutOfService, Deleting) that cannot serve jobs."""


class VlEndpointDispatcher:
    """Scales the VL endpoint out from zero when needed, then submits the job's manifest.

    The manifest (the `DispatchedJob` JSON) goes to the results bucket under
    `sagemaker/manifests/<job_id>.json`; the inference id is the job id, which is how the
    completion handler finds the job again.
    """

    def __init__(
        self,
        *,
        s3: S3Client,
        runtime: SageMakerRuntimeClient,
        capacity: EndpointCapacity,
        results_bucket: str,
        scale_in_alarm: AlarmRearm | None = None,
    ) -> None:
        self._s3 = s3
        self._runtime = runtime
        self._capacity = capacity
        self._results_bucket = results_bucket
        self._scale_in_alarm = scale_in_alarm

    @property
    def target(self) -> str:
        return f"sagemaker:{self._capacity.endpoint_name}"

    def _rearm_scale_in_alarm(self) -> None:
        if self._scale_in_alarm is not None:
            self._scale_in_alarm.rearm(
                f"{self._capacity.endpoint_name} is scaling out from 0 to 1 instance"
            )

    def submit(self, job: DispatchedJob) -> VlSubmission:
        # Scale-out is idempotent: no call when the variant already has an instance or the
        # endpoint is changing (a scale-in in flight is caught by the backlog step scaling).
        # Going 0 → 1, the scale-in alarm is re-armed first (lambdas/common/alarms.py).
        scale_out, state = self._capacity.scale_out(before_change=self._rearm_scale_in_alarm)
        if scale_out is ScaleResult.UNAVAILABLE:
            raise EndpointUnavailable(
                f"VL endpoint {self._capacity.endpoint_name} is {state.endpoint_status}"
            )
        manifest_key = f"{names.VL_MANIFEST_PREFIX}{job.job_id}.json"
        self._s3.put_object(
            Bucket=self._results_bucket,
            Key=manifest_key,
            Body=job.model_dump_json().encode(),
            ContentType="application/json",
        )
        manifest_uri = s3_uri(self._results_bucket, manifest_key)
        response = self._runtime.invoke_endpoint_async(
            EndpointName=self._capacity.endpoint_name,
            InputLocation=manifest_uri,
            ContentType="application/json",
            InferenceId=job.job_id,
            InvocationTimeoutSeconds=names.VL_INVOCATION_TIMEOUT_SECONDS,
        )
        return VlSubmission(
            inference_id=response.get("InferenceId") or job.job_id,
            manifest_uri=manifest_uri,
            output_location=response["OutputLocation"],
            failure_location=response.get("FailureLocation"),
            scale_out=scale_out,
            capacity_before=state,
        )
