"""The processor's call to the Office converter: a synchronous Lambda invoke with a
ConversionRequest, answered by a ConversionResponse (the PDF's key, or the user's error).

The processor waits for the answer: the converter's run (its time limit, plus its cold start)
is short beside the processor's own timeout, and one job's steps stay in one place. A converter
that dies on a document (LibreOffice crashing, out of memory) ends the job CONVERSION_FAILED
with Lambda's error; it is not retried, as the same bytes would kill it again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from botocore.config import Config

from idp.contract.conversion import ConversionRequest, ConversionResponse
from idp.contract.errors import ConversionFailed, ConversionTimeout, error_from_code
from idp.contract.topology import CONVERTER_TIMEOUT_SECONDS

if TYPE_CHECKING:
    from mypy_boto3_lambda import LambdaClient

# The invoke waits for the whole conversion (read timeout beyond the converter's own timeout)
# and is never sent twice by the client: a retried invoke would convert the document again.
CONVERTER_CLIENT_CONFIG: Final = Config(
    retries={"mode": "standard", "max_attempts": 1},
    connect_timeout=5,
    read_timeout=CONVERTER_TIMEOUT_SECONDS + 30,
)


class DocumentConverter(Protocol):
    """Turns a job's Office document into a PDF in the job's work area."""

    def convert(self, request: ConversionRequest) -> ConversionResponse: ...


@dataclass(frozen=True)
class LambdaDocumentConverter:
    """The production `DocumentConverter`: `lambda.invoke(InvocationType="RequestResponse")`
    of the converter function (its client built with CONVERTER_CLIENT_CONFIG)."""

    lambda_client: LambdaClient
    function_name: str

    def convert(self, request: ConversionRequest) -> ConversionResponse:
        response = self.lambda_client.invoke(
            FunctionName=self.function_name,
            InvocationType="RequestResponse",
            Payload=request.model_dump_json().encode(),
        )
        payload = response["Payload"].read()
        if response.get("FunctionError"):
            error = _lambda_error(payload)
            if "Task timed out" in error:
                raise ConversionTimeout(f"the converter ran out of time on this document: {error}")
            raise ConversionFailed(f"the converter failed on this document: {error}")
        answer = ConversionResponse.model_validate_json(payload)
        if answer.error is not None:
            raise error_from_code(answer.error.code, answer.error.message)
        return answer


def _lambda_error(payload: bytes) -> str:
    """Lambda's error body ({"errorType", "errorMessage"}) as one line."""
    try:
        body: Any = json.loads(payload)
    except ValueError:
        return payload.decode("utf-8", "replace")[:500]
    if isinstance(body, dict):
        kind, message = body.get("errorType", "Error"), body.get("errorMessage", "")
        return f"{kind}: {message}"[:500]
    return str(body)[:500]
