"""Faults the local runtime can inject, for reliability tests and drills: none by default.

They act where AWS would fail — an execution environment dying, an API throttling, the endpoint
answering an error, DynamoDB rejecting a write — never inside handler code.
"""

from __future__ import annotations

import json
import logging
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from pydantic import BaseModel, Field

from idp.local.loopback import LoopbackServer, read_body, reply

logger = logging.getLogger("idp.local.faults")


class Faults(BaseModel):
    """How many times each fault fires (counts go down as they fire)."""

    processor_crashes: int = Field(default=0, ge=0)  # kill the environment mid-job
    processor_crash_after_seconds: float = Field(default=0.0, ge=0)  # after PROCESSING shows
    lost_failure_destinations: int = Field(default=0, ge=0)  # on-failure record never arrives
    lambda_invoke_throttles: int = Field(default=0, ge=0)  # TooManyRequestsException
    endpoint_invoke_throttles: int = Field(default=0, ge=0)  # InvokeEndpointAsync throttled
    vl_inference_errors: int = Field(default=0, ge=0)  # the container answers 500
    dynamodb_write_throttles: int = Field(default=0, ge=0)  # ProvisionedThroughputExceeded
    # A large document's chunks (see ocr_processor_image/chunk_worker.py):
    duplicate_chunk_events: int = Field(default=0, ge=0)  # the first N chunk events arrive twice
    crash_chunk_index: int | None = Field(default=None, ge=0)  # this chunk's environment dies…
    chunk_crashes: int = Field(default=0, ge=0)  # …this many times, once its first page is done
    merge_crashes: int = Field(default=0, ge=0)  # the merger dies right after claiming the merge


class FaultCounter:
    """Thread-safe countdown of one fault."""

    def __init__(self, count: int) -> None:
        self._left = count
        self._lock = threading.Lock()
        self.fired = 0

    def take(self) -> bool:
        with self._lock:
            if self._left <= 0:
                return False
            self._left -= 1
            self.fired += 1
            return True


_WRITE_TARGETS = ("PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem")


class DynamoDbFaultProxy(LoopbackServer):
    """Forwards DynamoDB calls to the emulator, rejecting the first N writes as throttled.

    The handlers reach it through AWS_ENDPOINT_URL_DYNAMODB; their SDK retries must make the
    throttled writes land (no lost update). `after_write` sees each write that succeeded before
    its caller gets the answer, so a fault can strike right after a given write (an environment
    dying between two steps).
    """

    def __init__(
        self,
        *,
        upstream: str,
        throttles: FaultCounter,
        after_write: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        super().__init__(self._forward)
        self._upstream = upstream
        self.throttles = throttles
        self._after_write = after_write

    def _forward(self, request: BaseHTTPRequestHandler) -> None:
        body = read_body(request)
        target = request.headers.get("X-Amz-Target", "")
        if target.rsplit(".", 1)[-1] in _WRITE_TARGETS and self.throttles.take():
            logger.warning("fault: throttling DynamoDB %s", target)
            payload = json.dumps(
                {
                    "__type": "com.amazonaws.dynamodb.v20120810#"
                    "ProvisionedThroughputExceededException",
                    "message": "The level of configured provisioned throughput was exceeded",
                }
            ).encode()
            reply(request, 400, payload, content_type="application/x-amz-json-1.0")
            return
        headers = {
            key: value
            for key, value in request.headers.items()
            if key.lower() not in ("host", "content-length", "connection")
        }
        upstream = urllib.request.Request(  # noqa: S310 - loopback emulator URL
            f"{self._upstream}{request.path}", data=body, headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(upstream, timeout=60) as response:  # noqa: S310
                status, content, ctype = response.status, response.read(), response.headers
        except urllib.error.HTTPError as exc:
            status, content, ctype = exc.code, exc.read(), exc.headers
        if status == 200 and self._after_write is not None and target.endswith("UpdateItem"):
            self._after_write(json.loads(body or b"{}"))
        reply(request, status, content, content_type=ctype.get("Content-Type", "application/json"))
