"""Loopback HTTP endpoints for the two AWS APIs the emulator cannot run: Lambda Invoke and
SageMaker Runtime InvokeEndpointAsync.

The handlers' boto3 clients reach this server through AWS_ENDPOINT_URL_LAMBDA and
AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME, so the handler code makes the same calls as on AWS.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

logger = logging.getLogger(__name__)

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


LambdaInvokeHandler = Callable[[str, str, bytes], tuple[int, bytes]]
AsyncInvokeHandler = Callable[[AsyncInvokeRequest], AsyncInvokeAccepted]


class LocalServiceApi:
    """Serves the two APIs on 127.0.0.1 and a free port, in a background thread."""

    def __init__(
        self, *, lambda_invoke: LambdaInvokeHandler, invoke_endpoint_async: AsyncInvokeHandler
    ) -> None:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                api._dispatch(self)

            def log_message(self, format: str, *args: object) -> None:
                logger.debug(format, *args)

        self._lambda_invoke = lambda_invoke
        self._invoke_endpoint_async = invoke_endpoint_async
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _dispatch(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else b""
        try:
            if match := _LAMBDA_INVOKE.match(request.path):
                invocation_type = request.headers.get("X-Amz-Invocation-Type", "RequestResponse")
                status, payload = self._lambda_invoke(unquote(match["name"]), invocation_type, body)
                self._reply(request, status, payload, {})
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
                self._reply(
                    request,
                    202,
                    json.dumps({"InferenceId": accepted.inference_id}).encode(),
                    {
                        "X-Amzn-SageMaker-OutputLocation": accepted.output_location,
                        "X-Amzn-SageMaker-FailureLocation": accepted.failure_location,
                    },
                )
            else:
                raise ApiError(404, "UnknownOperationException", f"no operation at {request.path}")
        except ApiError as exc:
            self._reply(
                request,
                exc.status,
                json.dumps({"message": exc.message}).encode(),
                {"x-amzn-ErrorType": exc.code},
            )

    @staticmethod
    def _reply(
        request: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]
    ) -> None:
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            request.send_header(key, value)
        request.end_headers()
        request.wfile.write(body)
