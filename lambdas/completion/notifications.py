"""The two message shapes that arrive on the completion handler's SNS topics.

- SageMaker asynchronous inference notifications (success topic and error topic), e.g.
  {"invocationStatus": "Completed" | "Failed", "inferenceId": ..., "eventTime": ...,
   "receivedTime": ..., "failureReason": ..., "requestParameters": {"inputLocation": ...},
   "responseParameters": {"outputLocation": ... | "failureLocation": ...}}
  (see tests/events/sns_sagemaker_async_*.json).
- Lambda asynchronous-invocation destination records of the OCR processor's on-failure
  destination: {"requestContext": {"condition": "RetriesExhausted" | "EventAgeExceeded",
  "approximateInvokeCount": n}, "requestPayload": <DispatchedJob>, "responsePayload":
  {"errorType", "errorMessage"}} (see tests/events/sns_lambda_destination_failure.json).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from idp.chunks import ChunkSpec

COMPLETED: Final = "Completed"


class _Lenient(BaseModel):
    """AWS adds fields over time; keep what we read, ignore the rest."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class _InferenceRequest(_Lenient):
    endpoint_name: str | None = Field(default=None, alias="endpointName")
    input_location: str | None = Field(default=None, alias="inputLocation")


class _InferenceResponse(_Lenient):
    output_location: str | None = Field(default=None, alias="outputLocation")
    failure_location: str | None = Field(default=None, alias="failureLocation")


class AsyncInferenceNotification(_Lenient):
    """A SageMaker asynchronous inference result notification."""

    invocation_status: str = Field(alias="invocationStatus")
    inference_id: str = Field(alias="inferenceId", min_length=1)
    event_time: datetime | None = Field(default=None, alias="eventTime")
    received_time: datetime | None = Field(default=None, alias="receivedTime")
    failure_reason: str | None = Field(default=None, alias="failureReason")
    request: _InferenceRequest = Field(default_factory=_InferenceRequest, alias="requestParameters")
    response: _InferenceResponse = Field(
        default_factory=_InferenceResponse, alias="responseParameters"
    )
    top_level_failure_location: str | None = Field(default=None, alias="failureLocation")

    @property
    def succeeded(self) -> bool:
        return self.invocation_status == COMPLETED

    @property
    def output_location(self) -> str | None:
        return self.response.output_location

    @property
    def input_location(self) -> str | None:
        """The manifest the inference read: for a chunk of a large document, it names the chunk."""
        return self.request.input_location

    @property
    def failure_location(self) -> str | None:
        # Documented under responseParameters; some senders put it at the top level.
        return self.response.failure_location or self.top_level_failure_location


class _RequestContext(_Lenient):
    condition: str = "Unknown"
    approximate_invoke_count: int = Field(default=1, alias="approximateInvokeCount")
    function_arn: str | None = Field(default=None, alias="functionArn")


class LambdaDestinationRecord(_Lenient):
    """An asynchronous-invocation record sent to the processor's on-failure destination."""

    timestamp: datetime | None = None
    request_context: _RequestContext = Field(alias="requestContext")
    request_payload: Any = Field(default=None, alias="requestPayload")
    response_payload: Any = Field(default=None, alias="responsePayload")

    def _payload(self) -> dict[str, Any]:
        payload = self.request_payload
        if isinstance(payload, str):  # a payload that was not a JSON object arrives as text
            try:
                payload = json.loads(payload)
            except json.JSONDecodeError:
                return {}
        return payload if isinstance(payload, dict) else {}

    @property
    def job_id(self) -> str | None:
        job_id = self._payload().get("job_id")
        return job_id if isinstance(job_id, str) and job_id else None

    @property
    def chunk(self) -> ChunkSpec | None:
        """The page range the failed invocation was OCR-ing, for a large document's chunk."""
        try:
            return ChunkSpec.model_validate(self._payload().get("chunk"))
        except ValidationError:
            return None

    @property
    def error_summary(self) -> str:
        """`errorType: errorMessage` from the function's last response, when there was one."""
        payload = self.response_payload
        if isinstance(payload, dict):
            kind = payload.get("errorType")
            message = payload.get("errorMessage")
            return ": ".join(str(part) for part in (kind, message) if part) or json.dumps(payload)
        return str(payload) if payload else ""


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
