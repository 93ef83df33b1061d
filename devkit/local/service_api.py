"""Loopback HTTP endpoints for the two AWS APIs the emulator cannot run: Lambda Invoke and
SageMaker Runtime InvokeEndpointAsync.

The handlers' boto3 clients reach this server through AWS_ENDPOINT_URL_LAMBDA and
AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME, so the handler code makes the same calls as on AWS.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote

from devkit.local.loopback import LoopbackServer, read_body, reply

_LAMBDA_INVOKE = re.compile(r"^/2015-03-31/functions/(?P<name>[^/]+)/invocations")
_ASYNC_INVOKE = re.compile(r"^/endpoints/(?P<name>[^/]+)/async-invocations")


class ApiError(Exception):
    """An AWS-style error answer: HTTP status + error code, parsed by botocore as a ClientError."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True)
class AsyncInvokeRequest:
    endpoint_name: str
    input_location: str
    inference_id: str | None
    content_type: str
    invocation_timeout_seconds: int | None


@dataclass(frozen=True)
class AsyncInvokeAccepted:
    inference_id: str
    output_location: str
    failure_location: str


# (status, body, headers): a synchronous invoke's function error is a header, as on Lambda.
LambdaInvokeHandler = Callable[[str, str, bytes], tuple[int, bytes, dict[str, str]]]
AsyncInvokeHandler = Callable[[AsyncInvokeRequest], AsyncInvokeAccepted]


class LocalServiceApi(LoopbackServer):
    """Serves the two APIs on 127.0.0.1 and a free port, in a background thread."""

    def __init__(
        self, *, lambda_invoke: LambdaInvokeHandler, invoke_endpoint_async: AsyncInvokeHandler
    ) -> None:
        super().__init__(self._dispatch)
        self._lambda_invoke = lambda_invoke
        self._invoke_endpoint_async = invoke_endpoint_async

    def _dispatch(self, request: BaseHTTPRequestHandler) -> None:
        body = read_body(request)
        try:
            if match := _LAMBDA_INVOKE.match(request.path):
                invocation_type = request.headers.get("X-Amz-Invocation-Type", "RequestResponse")
                status, payload, reply_headers = self._lambda_invoke(
                    unquote(match["name"]), invocation_type, body
                )
                reply(request, status, payload, headers=reply_headers)
            elif match := _ASYNC_INVOKE.match(request.path):
                headers = request.headers
                timeout = headers.get("X-Amzn-SageMaker-InvocationTimeoutSeconds")
                accepted = self._invoke_endpoint_async(
                    AsyncInvokeRequest(
                        endpoint_name=unquote(match["name"]),
                        input_location=headers.get("X-Amzn-SageMaker-InputLocation", ""),
                        inference_id=headers.get("X-Amzn-SageMaker-Inference-Id"),
                        content_type=headers.get(
                            "X-Amzn-SageMaker-Content-Type", "application/json"
                        ),
                        invocation_timeout_seconds=int(timeout) if timeout else None,
                    )
                )
                reply(
                    request,
                    202,
                    json.dumps({"InferenceId": accepted.inference_id}).encode(),
                    headers={
                        "X-Amzn-SageMaker-OutputLocation": accepted.output_location,
                        "X-Amzn-SageMaker-FailureLocation": accepted.failure_location,
                    },
                )
            else:
                raise ApiError(404, "UnknownOperationException", f"no operation at {request.path}")
        except ApiError as exc:
            reply(
                request,
                exc.status,
                json.dumps({"message": exc.message}).encode(),
                headers={"x-amzn-ErrorType": exc.code},
            )
