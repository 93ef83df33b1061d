"""What the VL endpoint sends back: SageMaker's asynchronous-inference notifications (on the
success and error topics), e.g.
{"invocationStatus": "Completed" | "Failed", "inferenceId": ..., "eventTime": ...,
 "receivedTime": ..., "failureReason": ..., "requestParameters": {"inputLocation": ...},
 "responseParameters": {"outputLocation": ... | "failureLocation": ...}}
(see tests/events/sns_sagemaker_async_*.json), and the output (a result, or an error body) or
failure object each one points to.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from idp.contract.errors import InferenceFailure, JobError, error_from_code
from idp.contract.jobs import EndpointResult
from idp.contract.results import OcrResult

COMPLETED: Final = "Completed"
_EMBEDDED_JSON: Final = re.compile(r"\{.*\}", re.DOTALL)


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

    def result(self) -> EndpointResult:
        """What the processor needs to finish the job from this inference's output."""
        return EndpointResult(
            output_location=self.output_location,
            received_time=self.received_time,
            event_time=self.event_time,
        )


def parse_output(body: bytes) -> OcrResult | JobError:
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


def reported_error(body: bytes | None) -> JobError | None:
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
