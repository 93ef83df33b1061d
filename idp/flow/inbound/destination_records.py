"""Lambda asynchronous-invocation records of the OCR processor's on-failure destination (they
arrive on the error topic): {"requestContext": {"condition": "RetriesExhausted" |
"EventAgeExceeded", "approximateInvokeCount": n}, "requestPayload": <DispatchedJob>,
"responsePayload": {"errorType", "errorMessage"}}
(see tests/events/sns_lambda_destination_failure.json).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from idp.contract.jobs import ChunkSpec


class _Lenient(BaseModel):
    """AWS adds fields over time; keep what we read, ignore the rest."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


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
