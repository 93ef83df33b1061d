"""The processor's call to the Office converter: a synchronous Lambda invoke with a
ConversionRequest, answered by a ConversionResponse (how it converted, or the user's error).

The converter's role holds no S3 or KMS grant: `conversion_request` signs, with the
processor's own credentials, a GET of the job's input and PUTs of the job's two converted
objects, valid for as long as a conversion may take.

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

from idp.contract.conversion import (
    CONVERTED_PDF,
    CONVERTED_SHEETS,
    PDF_CONTENT_TYPE,
    SHEETS_CONTENT_TYPE,
    ConversionRequest,
    ConversionResponse,
    converted_key,
)
from idp.contract.errors import ConversionFailed, ConversionTimeout, error_from_code
from idp.contract.topology import CONVERTER_TIMEOUT_SECONDS

if TYPE_CHECKING:
    from mypy_boto3_lambda import LambdaClient
    from mypy_boto3_s3 import S3Client

# The invoke waits for the whole conversion (read timeout beyond the converter's own timeout)
# and is never sent twice by the client: a retried invoke would convert the document again.
CONVERTER_CLIENT_CONFIG: Final = Config(
    retries={"mode": "standard", "max_attempts": 1},
    connect_timeout=5,
    read_timeout=CONVERTER_TIMEOUT_SECONDS + 30,
)


# The URLs outlive the converter's whole run (its timeout, and its cold start), no longer.
URL_LIFETIME_SECONDS: Final = CONVERTER_TIMEOUT_SECONDS + 60


def conversion_request(
    s3: S3Client, *, job_id: str, input_bucket: str, input_key: str, results_bucket: str
) -> ConversionRequest:
    """The converter's event for one job: presigned (SigV4) URLs of exactly its input and its
    two converted objects. A PUT must send the signed Content-Type."""

    def signed(operation: str, **params: str) -> str:
        url = s3.generate_presigned_url(operation, Params=params, ExpiresIn=URL_LIFETIME_SECONDS)
        if "X-Amz-Algorithm=AWS4-HMAC-SHA256" not in url:
            raise ValueError("the S3 client must presign with SigV4 (idp.aws.clients.client)")
        return url

    def put(name: str, content_type: str) -> str:
        key = converted_key(job_id, name)
        return signed("put_object", Bucket=results_bucket, Key=key, ContentType=content_type)

    return ConversionRequest(
        job_id=job_id,
        input_url=signed("get_object", Bucket=input_bucket, Key=input_key),
        pdf_url=put(CONVERTED_PDF, PDF_CONTENT_TYPE),
        sheets_url=put(CONVERTED_SHEETS, SHEETS_CONTENT_TYPE),
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
