"""Lambda's asynchronous invocation: the event queue, its workers, the retries of a failed event
and the on-failure destination (a destination record on the processor's error topic)."""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from devkit.local.emulator import ACCOUNT_ID
from devkit.local.functions import Invocation
from idp.contract.timestamps import utc_now
from idp.contract.topology import PROCESSOR_ON_FAILURE_TOPIC, Function

if TYPE_CHECKING:
    from mypy_boto3_sns import SNSClient

    from devkit.local.context import ServiceContext
    from devkit.local.faults import FaultCounter

logger = logging.getLogger("devkit.local")


class Invoke(Protocol):
    """One invocation of a deployed function (devkit.local.lambda_service.LambdaService.invoke)."""

    def __call__(
        self, function: Function, event: Any, *, attempt: int = 1, request_id: str | None = None
    ) -> Invocation: ...


@dataclass
class AsyncInvokes:
    """Events accepted with InvocationType=Event, run by workers with Lambda's retry policy."""

    context: ServiceContext
    invoke_once: Invoke
    sns: SNSClient  # where the on-failure destination record is published
    lost_destinations: FaultCounter  # the fault that loses on-failure records
    _queue: deque[tuple[Function, Any]] = field(default_factory=deque, init=False)
    _cv: threading.Condition = field(default_factory=threading.Condition, init=False)

    def submit(self, function: Function, event: Any, *, copies: int = 1) -> None:
        """Queue an event (`copies` > 1: the same event delivered more than once)."""
        with self._cv:
            self._queue.extend((function, event) for _ in range(copies))
            self._cv.notify_all()

    def wake_workers(self) -> None:
        """Let the waiting workers see that the runtime is stopping."""
        with self._cv:
            self._cv.notify_all()

    def run_worker(self) -> None:
        while not self.context.stop.is_set():
            with self._cv:
                while not self._queue and not self.context.stop.is_set():
                    self._cv.wait(timeout=1)
                if self.context.stop.is_set():
                    return
                function, event = self._queue.popleft()
            self.invoke(function, event)

    def invoke(self, function: Function, event: Any) -> Invocation:
        """Lambda's async invoke: 1 + retry attempts, then the on-failure destination."""
        settings = self.context.settings
        attempts = 1 + settings.async_retry_attempts
        result = Invocation("error")
        request_id = str(uuid.uuid4())  # Lambda retries an async event under its request id
        for attempt in range(1, attempts + 1):
            result = self.invoke_once(function, event, attempt=attempt, request_id=request_id)
            if result.ok:
                return result
            logger.warning(
                "%s attempt %d/%d failed: %s %s",
                function.value,
                attempt,
                attempts,
                result.error_type,
                result.error_message,
            )
            if attempt == attempts:
                break
            if self.context.stop.wait(settings.async_retry_delay_seconds):
                logger.info("stopping: %s's remaining retries are dropped", function.value)
                return result
        self._on_failure(function, event, result, attempts)
        return result

    def _on_failure(
        self, function: Function, event: Any, result: Invocation, attempts: int
    ) -> None:
        resources = self.context.resources
        record = {
            "version": "1.0",
            "timestamp": utc_now(),
            "requestContext": {
                "requestId": str(uuid.uuid4()),
                "functionArn": (
                    f"arn:aws:lambda:{resources.region}:{ACCOUNT_ID}:function:"
                    f"{resources.function_names[function]}:$LATEST"
                ),
                "condition": "RetriesExhausted",
                "approximateInvokeCount": attempts,
            },
            "requestPayload": event,
            "responseContext": {
                "statusCode": 200,
                "executedVersion": "$LATEST",
                "functionError": "Unhandled",
            },
            "responsePayload": {
                "errorMessage": result.error_message,
                "errorType": result.error_type,
            },
        }
        if function is Function.PROCESSOR and self.lost_destinations.take():
            logger.warning("fault: the on-failure destination record is lost")
        elif function is Function.PROCESSOR:
            self.sns.publish(
                TopicArn=resources.topic_arns[PROCESSOR_ON_FAILURE_TOPIC],
                Message=json.dumps(record),
            )
        else:
            self.context.stats.failed_deliveries.append(record)
            logger.error("%s dropped an event after %d attempts", function.value, attempts)
