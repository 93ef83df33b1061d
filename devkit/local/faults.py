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
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from devkit.local.loopback import LoopbackServer, read_body, reply
from idp.contract import names
from idp.contract.names import JobStatus
from idp.contract.topology import Function

if TYPE_CHECKING:
    from devkit.local.emulator import AwsEndpoint
    from devkit.local.functions import LocalFunction

logger = logging.getLogger("devkit.local.faults")


class Faults(BaseModel):
    """How many times each fault fires (counts go down as they fire)."""

    processor_crashes: int = Field(default=0, ge=0)  # kill the environment mid-job
    processor_crash_every: int = Field(default=1, ge=1)  # …in every Nth invocation (a rate)
    processor_crash_after_seconds: float = Field(default=0.0, ge=0)  # after PROCESSING shows
    lost_failure_destinations: int = Field(default=0, ge=0)  # on-failure record never arrives
    lambda_invoke_throttles: int = Field(default=0, ge=0)  # TooManyRequestsException
    endpoint_invoke_throttles: int = Field(default=0, ge=0)  # InvokeEndpointAsync throttled
    vl_inference_errors: int = Field(default=0, ge=0)  # the container answers 500
    dynamodb_write_throttles: int = Field(default=0, ge=0)  # ProvisionedThroughputExceeded
    dynamodb_throttle_every: int = Field(default=1, ge=1)  # …on every Nth write
    # A large document's chunks (see ocr_processor_image/chunk_worker.py):
    duplicate_chunk_events: int = Field(default=0, ge=0)  # the first N chunk events arrive twice
    crash_chunk_index: int | None = Field(default=None, ge=0)  # this chunk's environment dies…
    crash_chunk_key: str | None = None  # …of this input key's job only (None: of any job)…
    chunk_crashes: int = Field(default=0, ge=0)  # …this many times, once its first page is done
    merge_crashes: int = Field(default=0, ge=0)  # the merger dies right after claiming the merge


class FaultCounter:
    """Thread-safe countdown of one fault, striking on every `every`th chance until spent."""

    def __init__(self, count: int, *, every: int = 1) -> None:
        self._left = count
        self._every = every
        self._chances = 0
        self._lock = threading.Lock()
        self.fired = 0

    def take(self) -> bool:
        with self._lock:
            self._chances += 1
            if self._left <= 0 or self._chances % self._every:
                return False
            self._left -= 1
            self.fired += 1
            return True


class LambdaFaults:
    """The faults that strike Lambda: throttled Invoke calls, chunk events delivered twice, lost
    on-failure records, and processor environments dying in the middle of their work.

    The crashes watch the job record from a thread of their own and kill the environment when
    the job shows the step they strike after, as an OOM kill or a host failure would.
    """

    def __init__(
        self,
        faults: Faults,
        *,
        endpoint: AwsEndpoint,
        jobs_table: str,
        functions: Mapping[Function, LocalFunction],
    ) -> None:
        self._faults = faults
        self._endpoint = endpoint
        self._jobs_table = jobs_table
        self._functions = functions  # filled when the runtime deploys them
        self.processor_crashes = FaultCounter(
            faults.processor_crashes, every=faults.processor_crash_every
        )
        self.lambda_invoke_throttles = FaultCounter(faults.lambda_invoke_throttles)
        self.lost_failure_destinations = FaultCounter(faults.lost_failure_destinations)
        self.duplicate_chunk_events = FaultCounter(faults.duplicate_chunk_events)
        self.chunk_crashes = FaultCounter(faults.chunk_crashes)
        self.merge_crashes = FaultCounter(faults.merge_crashes)
        # Environments the crash faults really killed (a fault that comes too late, the work
        # already done, kills nothing).
        self.kills = 0

    def arm_processor_crash(
        self, event: Any, *, attempt: int, request_id: str, finished: threading.Event
    ) -> None:
        """Before a processor invocation: watch it for the crash that is due, if any."""
        chunk = event.get("chunk") if isinstance(event, dict) else None
        if (
            isinstance(chunk, dict)
            and chunk.get("index") == self._faults.crash_chunk_index
            and self._faults.crash_chunk_key in (None, event.get("key"))
            and self.chunk_crashes.take()
        ):
            threading.Thread(
                target=self._crash_chunk_mid_page,
                args=(str(event.get("job_id")), int(chunk["index"]), request_id, finished),
                daemon=True,
            ).start()
        elif self.processor_crashes.take():
            threading.Thread(
                target=self._crash_when_processing,
                args=(str(event.get("job_id")), attempt, request_id, finished),
                daemon=True,
            ).start()

    def crash_after_merge_claim(self, write: dict[str, Any]) -> None:
        """Kill the processor that has just claimed a merge, before it hears the answer."""
        if "merge_invocation" not in str(write.get("UpdateExpression", "")):
            return
        request_id = write.get("ExpressionAttributeValues", {}).get(":inv", {}).get("S")
        if request_id and self.merge_crashes.take():
            logger.warning("fault: the merging processor dies right after claiming the merge")
            self._processor.crash_request(str(request_id))

    @property
    def _processor(self) -> LocalFunction:
        return self._functions[Function.PROCESSOR]

    def _job_reader(self, job_id: str) -> Callable[[], dict[str, Any]]:
        """Reads the job's raw item (consistently, numbers as Decimal) each time it is called."""
        table = self._endpoint.resource("dynamodb").Table(self._jobs_table)

        def read() -> dict[str, Any]:
            item = table.get_item(Key={names.JOB_ID_ATTR: job_id}, ConsistentRead=True)
            return dict(item.get("Item", {}))

        return read

    def _crash_chunk_mid_page(
        self, job_id: str, index: int, request_id: str, finished: threading.Event
    ) -> None:
        """Kill the environment of one chunk's invocation once its first page shows done."""
        job = self._job_reader(job_id)
        while not finished.wait(0.05):
            progress = job().get("page_progress", {})
            if int(progress.get(str(index), 0)) >= 1:
                if self._processor.crash_request(request_id):
                    self.kills += 1
                    logger.warning("fault: killed chunk %d of job %s mid-chunk", index, job_id)
                return

    def _crash_when_processing(
        self, job_id: str, attempt: int, request_id: str, finished: threading.Event
    ) -> None:
        """Kill this invocation's environment once its attempt shows on the job (PROCESSING,
        attempts ≥ n); other invocations in flight go on."""
        job = self._job_reader(job_id)
        while not finished.wait(0.05):
            record = job()
            started = int(record.get("attempts", 0)) >= attempt
            if started and record.get("status") == JobStatus.PROCESSING.value:
                if finished.wait(self._faults.processor_crash_after_seconds):
                    return
                if self._processor.crash_request(request_id):
                    self.kills += 1
                    logger.warning("fault: killed the processor in attempt %d", attempt)
                    return


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
