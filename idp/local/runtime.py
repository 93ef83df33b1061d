"""The local runtime: does what AWS does between the pipeline's components.

- an SQS event source feeding the invoker (batch size, partial batch failures, redrive to the DLQ
  after maxReceiveCount by the emulator's redrive policy);
- Lambda async invokes of the processor: a worker pool with the stack's retry count and its
  on-failure destination (a Lambda destination record published to the error topic);
- SNS → Lambda delivery for the completion and scale-in handlers;
- the VL endpoint: the real container server process, started when the invoker scales the variant
  0 → 1 and stopped on scale-in, with SageMaker async semantics (output/failure objects in S3,
  success/error notifications on SNS);
- the scale-in alarm, evaluated from the endpoint's backlog and delivered to its topic.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from idp import names
from idp.local.emulator import ACCOUNT_ID, AwsEndpoint
from idp.local.faults import DynamoDbFaultProxy, FaultCounter
from idp.local.functions import Invocation, LocalFunction
from idp.local.resources import LocalResources
from idp.local.service_api import ApiError, LocalServiceApi
from idp.local.settings import LocalSettings
from idp.local.vl_endpoint import VlEndpointSimulator
from idp.names import Env, JobStatus, ProcessorEnv
from idp.topology import FUNCTIONS, PROCESSOR_ON_FAILURE_TOPIC, Function, Topic

logger = logging.getLogger("idp.local")


@dataclass
class RuntimeStats:
    """What the runtime observed; read by tests and the load benchmark."""

    invocations: Counter[str] = field(default_factory=Counter)
    processor_events: Counter[str] = field(default_factory=Counter)  # job id → invocations
    chunk_events: Counter[str] = field(default_factory=Counter)  # "<job id>/<chunk>" → events
    failed_deliveries: list[dict[str, Any]] = field(default_factory=list)
    alarm_states: list[str] = field(default_factory=list)


class LocalRuntime:
    """Runs the pipeline's functions and the glue between them, on loopback only."""

    def __init__(
        self, *, endpoint: AwsEndpoint, resources: LocalResources, settings: LocalSettings
    ) -> None:
        self.endpoint = endpoint
        self.resources = resources
        self.settings = settings
        self.stats = RuntimeStats()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._sqs = endpoint.client("sqs")
        self._sns = endpoint.client("sns")
        self.api = LocalServiceApi(
            lambda_invoke=self._on_lambda_invoke,
            invoke_endpoint_async=self._on_invoke_endpoint_async,
        )
        self.functions: dict[Function, LocalFunction] = {}
        self.vl = VlEndpointSimulator(
            endpoint=endpoint,
            resources=resources,
            settings=settings,
            stop=self._stop,
        )
        self._async_queue: list[tuple[dict[str, Any], int]] = []
        self._async_cv = threading.Condition()
        faults = settings.faults
        self.processor_crashes = FaultCounter(faults.processor_crashes)
        self.lambda_invoke_throttles = FaultCounter(faults.lambda_invoke_throttles)
        self.lost_failure_destinations = FaultCounter(faults.lost_failure_destinations)
        self.duplicate_chunk_events = FaultCounter(faults.duplicate_chunk_events)
        self.chunk_crashes = FaultCounter(faults.chunk_crashes)
        self.merge_crashes = FaultCounter(faults.merge_crashes)
        self.dynamodb_proxy: DynamoDbFaultProxy | None = None
        if (faults.dynamodb_write_throttles or faults.merge_crashes) and endpoint.url:
            self.dynamodb_proxy = DynamoDbFaultProxy(
                upstream=endpoint.url,
                throttles=FaultCounter(faults.dynamodb_write_throttles),
                after_write=self._crash_after_merge_claim if faults.merge_crashes else None,
            )

    def _container_function(self, env: dict[str, str], image: str) -> LocalFunction:
        from idp.local.lambda_container import ContainerEnvironment, ContainerFunction

        spec = FUNCTIONS[Function.PROCESSOR]
        name = self.resources.function_names[Function.PROCESSOR]
        container = ContainerFunction(
            image=image,
            handler=spec.handler,
            function_name=name,
            memory_mb=spec.memory_mb,
            ephemeral_storage_mb=names.DEFAULT_PROCESSOR_EPHEMERAL_STORAGE_MIB,
            region=self.endpoint.region,
        )
        return LocalFunction(
            name=name,
            handler=spec.handler,
            env=env,
            memory_mb=spec.memory_mb,
            timeout_s=self.settings.processor_timeout_seconds,
            concurrency=self.settings.processor_concurrency,
            environment_factory=lambda function_env: ContainerEnvironment(container, function_env),
        )

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        self.api.start()
        if self.dynamodb_proxy is not None:
            self.dynamodb_proxy.start()
        settings = self.settings
        tmp_root = settings.work_dir / "lambda-tmp"
        tmp_root.mkdir(parents=True, exist_ok=True)
        for function, spec in FUNCTIONS.items():
            env = {
                **self.endpoint.process_env(),
                "AWS_ENDPOINT_URL_LAMBDA": self.api.url,
                "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": self.api.url,
                **self.resources.function_env(
                    function,
                    vl_enabled=settings.vl_enabled,
                    overrides={
                        Env.MAX_PAGES: str(settings.max_pages),
                        Env.MAX_INPUT_BYTES: str(settings.max_input_bytes),
                        Env.CHUNK_PAGES: str(settings.chunk_pages),
                        # The claim must expire before the shortened visibility timeout does.
                        Env.DISPATCH_LEASE_SECONDS: str(
                            max(1, settings.visibility_timeout_seconds // 2)
                        ),
                        Env.STALE_PROCESSING_SECONDS: str(settings.stale_processing_seconds),
                        Env.STALE_QUEUED_SECONDS: str(settings.stale_queued_seconds),
                    },
                ),
            }
            if self.dynamodb_proxy is not None:
                env["AWS_ENDPOINT_URL_DYNAMODB"] = self.dynamodb_proxy.url
            if settings.quiet_functions:
                env |= {"POWERTOOLS_LOG_LEVEL": "WARNING", "POWERTOOLS_METRICS_DISABLED": "true"}
            concurrency = 1
            timeout = float(spec.timeout_seconds)
            if function is Function.PROCESSOR:
                # Each Lambda environment has vCPUs of its own; here the environments share this
                # machine's cores, so each gets its share of them instead of oversubscribing.
                env[ProcessorEnv.CPU_THREADS] = str(settings.processor_cpu_threads)
            if function is Function.PROCESSOR and settings.processor_image:
                # The image brings its own /tmp, HOME and PaddleX settings, as on Lambda.
                self.functions[function] = self._container_function(env, settings.processor_image)
                continue
            # Each function gets its own /tmp, the only writable path on Lambda.
            function_tmp = tmp_root / function.value
            function_tmp.mkdir(exist_ok=True)
            env |= {"HOME": str(function_tmp), "TMPDIR": str(function_tmp)}
            if function is Function.PROCESSOR:
                env |= {
                    "PADDLE_PDX_CACHE_HOME": str(function_tmp / "paddlex"),
                    "PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK": "True",
                }
                concurrency = settings.processor_concurrency
                timeout = settings.processor_timeout_seconds
            self.functions[function] = LocalFunction(
                name=self.resources.function_names[function],
                handler=spec.handler,
                env=env,
                memory_mb=spec.memory_mb,
                timeout_s=timeout,
                concurrency=concurrency,
            )
        self._spawn("sqs-event-source", self._poll_job_queue)
        for _ in range(settings.processor_concurrency):
            self._spawn("async-invoke", self._run_async_invokes)
        for function, url in self.resources.delivery_queue_urls.items():
            self._spawn(f"sns-{function.value}", self._deliver_sns, function, url)
        for function, spec in FUNCTIONS.items():
            if spec.schedule_minutes is not None:
                self._spawn(f"schedule-{function.value}", self._run_on_schedule, function)
        if settings.vl_enabled:
            self.vl.start()
            self._spawn("scale-in-alarm", self._evaluate_alarm)

    def stop(self) -> None:
        self._stop.set()
        with self._async_cv:
            self._async_cv.notify_all()
        for thread in self._threads:
            thread.join(timeout=30)
        self.vl.stop()
        for function in self.functions.values():
            function.shutdown()
        self.api.stop()
        if self.dynamodb_proxy is not None:
            self.dynamodb_proxy.stop()

    def _spawn(self, name: str, target: Any, *args: Any) -> None:
        thread = threading.Thread(target=self._guard, args=(target, *args), name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _guard(self, target: Any, *args: Any) -> None:
        """Keep a glue loop alive through emulator hiccups; the pipeline must not stall."""
        while not self._stop.is_set():
            try:
                target(*args)
                return
            except Exception:
                logger.exception("local runtime loop %s failed; restarting it", target.__name__)
                time.sleep(0.5)

    # -- SQS event source → invoker ------------------------------------------------------------
    def _poll_job_queue(self) -> None:
        while not self._stop.is_set():
            response = self._sqs.receive_message(
                QueueUrl=self.resources.queue_url,
                MaxNumberOfMessages=self.settings.invoker_batch_size,
                WaitTimeSeconds=self.settings.poll_wait_seconds,
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
            )
            messages = response.get("Messages", [])
            if not messages:
                continue
            event = {"Records": [self._sqs_record(message) for message in messages]}
            result = self._invoke(Function.INVOKER, event)
            if not result.ok:
                # The whole batch failed: every message returns after its visibility timeout.
                logger.error("invoker failed: %s %s", result.error_type, result.error_message)
                continue
            failed = {
                item["itemIdentifier"]
                for item in (result.payload or {}).get("batchItemFailures", [])
            }
            done = [m for m in messages if m["MessageId"] not in failed]
            if done:
                self._sqs.delete_message_batch(
                    QueueUrl=self.resources.queue_url,
                    Entries=[
                        {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                        for i, m in enumerate(done)
                    ],
                )

    def _sqs_record(self, message: dict[str, Any]) -> dict[str, Any]:
        return {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message["Body"],
            "attributes": message.get("Attributes", {}),
            "messageAttributes": message.get("MessageAttributes", {}),
            "md5OfBody": message.get("MD5OfBody", ""),
            "eventSource": "aws:sqs",
            "eventSourceARN": self.resources.queue_arn,
            "awsRegion": self.resources.region,
        }

    # -- Lambda Invoke API --------------------------------------------------------------------
    def _function_by_name(self, name: str) -> Function:
        short = name.rsplit(":", 1)[-1]
        for function, function_name in self.resources.function_names.items():
            if short == function_name:
                return function
        raise ApiError(404, "ResourceNotFoundException", f"Function not found: {name}")

    def _on_lambda_invoke(self, name: str, invocation_type: str, body: bytes) -> tuple[int, bytes]:
        function = self._function_by_name(name)
        event = json.loads(body or b"{}")
        if self.lambda_invoke_throttles.take():
            logger.warning("fault: throttling Lambda Invoke of %s", function.value)
            raise ApiError(429, "TooManyRequestsException", "Rate Exceeded.")
        if invocation_type == "Event":
            copies = 1
            if function is Function.PROCESSOR:
                self.stats.processor_events[str(event.get("job_id"))] += 1
                chunk = event.get("chunk")
                if isinstance(chunk, dict):
                    self.stats.chunk_events[f"{event.get('job_id')}/{chunk.get('index')}"] += 1
                    if self.duplicate_chunk_events.take():
                        logger.warning("fault: chunk %s is delivered twice", chunk.get("index"))
                        copies = 2
            with self._async_cv:
                for _ in range(copies):
                    self._async_queue.append(({"function": function.value, "event": event}, 0))
                self._async_cv.notify_all()
            return 202, b""
        result = self._invoke(function, event)
        return 200, json.dumps(result.payload).encode()

    def _run_async_invokes(self) -> None:
        while not self._stop.is_set():
            with self._async_cv:
                while not self._async_queue and not self._stop.is_set():
                    self._async_cv.wait(timeout=1)
                if self._stop.is_set():
                    return
                item, _ = self._async_queue.pop(0)
            self._invoke_async(Function(item["function"]), item["event"])

    def _invoke_async(self, function: Function, event: dict[str, Any]) -> Invocation:
        """Lambda's async invoke: 1 + retry attempts, then the on-failure destination."""
        attempts = 1 + self.settings.async_retry_attempts
        result = Invocation("error")
        request_id = str(uuid.uuid4())  # Lambda retries an async event under its request id
        for attempt in range(1, attempts + 1):
            result = self._invoke(function, event, attempt=attempt, request_id=request_id)
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
            if self._stop.wait(self.settings.async_retry_delay_seconds):
                logger.info("stopping: %s's remaining retries are dropped", function.value)
                return result
        self._on_async_failure(function, event, result, attempts)
        return result

    def _on_async_failure(
        self, function: Function, event: dict[str, Any], result: Invocation, attempts: int
    ) -> None:
        record = {
            "version": "1.0",
            "timestamp": _now(),
            "requestContext": {
                "requestId": str(uuid.uuid4()),
                "functionArn": (
                    f"arn:aws:lambda:{self.resources.region}:{ACCOUNT_ID}:function:"
                    f"{self.resources.function_names[function]}:$LATEST"
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
        if function is Function.PROCESSOR and self.lost_failure_destinations.take():
            logger.warning("fault: the on-failure destination record is lost")
        elif function is Function.PROCESSOR:
            self._sns.publish(
                TopicArn=self.resources.topic_arns[PROCESSOR_ON_FAILURE_TOPIC],
                Message=json.dumps(record),
            )
        else:
            self.stats.failed_deliveries.append(record)
            logger.error("%s dropped an event after %d attempts", function.value, attempts)

    def _invoke(
        self, function: Function, event: Any, *, attempt: int = 1, request_id: str | None = None
    ) -> Invocation:
        self.stats.invocations[function.value] += 1
        finished = threading.Event()
        request_id = request_id or str(uuid.uuid4())
        chunk = event.get("chunk") if isinstance(event, dict) else None
        faults = self.settings.faults
        if (
            function is Function.PROCESSOR
            and isinstance(chunk, dict)
            and chunk.get("index") == faults.crash_chunk_index
            and self.chunk_crashes.take()
        ):
            threading.Thread(
                target=self._crash_chunk_mid_page,
                args=(str(event.get("job_id")), int(chunk["index"]), request_id, finished),
                daemon=True,
            ).start()
        elif function is Function.PROCESSOR and self.processor_crashes.take():
            # Fault: the execution environment dies while the job is in flight (OOM kill,
            # host failure): once the job shows PROCESSING, the worker process is killed.
            threading.Thread(
                target=self._crash_when_processing,
                args=(str(event.get("job_id")), attempt, finished),
                daemon=True,
            ).start()
        try:
            return self.functions[function].invoke(event, request_id=request_id)
        finally:
            finished.set()

    def _crash_chunk_mid_page(
        self, job_id: str, index: int, request_id: str, finished: threading.Event
    ) -> None:
        """Kill the environment of one chunk's invocation once its first page shows done."""
        table = self.endpoint.resource("dynamodb").Table(self.resources.jobs_table)
        while not finished.wait(0.05):
            item = table.get_item(Key={names.JOB_ID_ATTR: job_id}, ConsistentRead=True)
            progress = item.get("Item", {}).get("page_progress", {})
            if int(progress.get(str(index), 0)) >= 1:
                if self.functions[Function.PROCESSOR].crash_request(request_id):
                    logger.warning("fault: killed chunk %d of job %s mid-chunk", index, job_id)
                return

    def _crash_after_merge_claim(self, write: dict[str, Any]) -> None:
        """Kill the processor that has just claimed a merge, before it hears the answer."""
        if "merge_invocation" not in str(write.get("UpdateExpression", "")):
            return
        request_id = write.get("ExpressionAttributeValues", {}).get(":inv", {}).get("S")
        if request_id and self.merge_crashes.take():
            logger.warning("fault: the merging processor dies right after claiming the merge")
            self.functions[Function.PROCESSOR].crash_request(str(request_id))

    def _crash_when_processing(self, job_id: str, attempt: int, finished: threading.Event) -> None:
        """Kill the processor once this attempt shows on the job (PROCESSING, attempts ≥ n)."""
        table = self.endpoint.resource("dynamodb").Table(self.resources.jobs_table)
        while not finished.wait(0.05):
            item = table.get_item(Key={names.JOB_ID_ATTR: job_id}, ConsistentRead=True)
            record = item.get("Item", {})
            started = int(record.get("attempts", 0)) >= attempt
            if started and record.get("status") == JobStatus.PROCESSING.value:
                if finished.wait(self.settings.faults.processor_crash_after_seconds):
                    return
                if self.functions[Function.PROCESSOR].kill_in_flight():
                    logger.warning("fault: killed the processor in attempt %d", attempt)
                    return

    # -- SNS → Lambda ----------------------------------------------------------------------------
    def _deliver_sns(self, function: Function, queue_url: str) -> None:
        while not self._stop.is_set():
            response = self._sqs.receive_message(
                QueueUrl=queue_url,
                MaxNumberOfMessages=1,
                WaitTimeSeconds=self.settings.poll_wait_seconds,
            )
            for message in response.get("Messages", []):
                envelope = json.loads(message["Body"])
                event = {
                    "Records": [
                        {
                            "EventSource": "aws:sns",
                            "EventVersion": "1.0",
                            "EventSubscriptionArn": f"{envelope.get('TopicArn')}:{uuid.uuid4()}",
                            "Sns": {
                                "Type": envelope.get("Type", "Notification"),
                                "MessageId": envelope.get("MessageId"),
                                "TopicArn": envelope.get("TopicArn"),
                                "Subject": envelope.get("Subject"),
                                "Message": envelope.get("Message"),
                                "Timestamp": envelope.get("Timestamp"),
                                "SignatureVersion": envelope.get("SignatureVersion", "1"),
                                "Signature": envelope.get("Signature", ""),
                                "SigningCertUrl": envelope.get("SigningCertURL", ""),
                                "UnsubscribeUrl": envelope.get("UnsubscribeURL", ""),
                                "MessageAttributes": envelope.get("MessageAttributes", {}),
                            },
                        }
                    ]
                }
                # SNS invokes Lambda asynchronously: same retry policy as any async invoke.
                self._invoke_async(function, event)
                self._sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])

    # -- EventBridge schedule ---------------------------------------------------------------------
    def _run_on_schedule(self, function: Function) -> None:
        """Invoke a scheduled function (asynchronously, as EventBridge does) every interval."""
        while not self._stop.wait(self.settings.sweep_interval_seconds):
            event = {
                "version": "0",
                "id": str(uuid.uuid4()),
                "detail-type": "Scheduled Event",
                "source": "aws.events",
                "time": _now(),
                "region": self.resources.region,
                "resources": [],
                "detail": {},
            }
            self._invoke_async(function, event)

    # -- SageMaker Runtime InvokeEndpointAsync --------------------------------------------------
    def _on_invoke_endpoint_async(self, request: Any) -> Any:
        return self.vl.accept(request)

    # -- CloudWatch alarm on ApproximateBacklogSizePerInstance -----------------------------------
    def _evaluate_alarm(self) -> None:
        """Evaluate the scale-in alarm as CloudWatch does and deliver state changes to SNS."""
        cloudwatch = self.endpoint.client("cloudwatch")
        window: list[float | None] = []
        state = "INSUFFICIENT_DATA"
        while not self._stop.wait(self.settings.alarm_period_seconds):
            window.append(self.vl.backlog_per_instance())
            window = window[-self.settings.alarm_evaluation_periods :]
            if len(window) < self.settings.alarm_evaluation_periods:
                continue
            # The scale-in handler may have re-armed the alarm (set it to OK) meanwhile.
            (alarm,) = cloudwatch.describe_alarms(AlarmNames=[self.resources.scale_in_alarm])[
                "MetricAlarms"
            ]
            state = str(alarm["StateValue"])
            # Missing data (no instance, no datapoint) is treated as breaching, like the stack.
            breaching = all(
                value is None or value < names.SCALE_IN_BACKLOG_THRESHOLD for value in window
            )
            new_state = "ALARM" if breaching else "OK"
            if new_state == state:
                continue
            old_state, state = state, new_state
            self.stats.alarm_states.append(new_state)
            reason = f"backlog per instance over the last {len(window)} periods: {window}"
            cloudwatch.set_alarm_state(
                AlarmName=self.resources.scale_in_alarm, StateValue=new_state, StateReason=reason
            )
            if new_state == "ALARM":
                self._sns.publish(
                    TopicArn=self.resources.topic_arns[Topic.SCALE_IN],
                    Subject=f'ALARM: "{self.resources.scale_in_alarm}"',
                    Message=json.dumps(
                        {
                            "AlarmName": self.resources.scale_in_alarm,
                            "NewStateValue": new_state,
                            "OldStateValue": old_state,
                            "NewStateReason": reason,
                            "StateChangeTime": _now(),
                            "Region": self.resources.region,
                            "Trigger": {
                                "MetricName": "ApproximateBacklogSizePerInstance",
                                "Namespace": "AWS/SageMaker",
                                "Dimensions": [
                                    {"name": "EndpointName", "value": self.resources.vl_endpoint}
                                ],
                                "Threshold": names.SCALE_IN_BACKLOG_THRESHOLD,
                                "ComparisonOperator": "LessThanThreshold",
                                "Period": self.settings.alarm_period_seconds,
                                "EvaluationPeriods": self.settings.alarm_evaluation_periods,
                                "TreatMissingData": "breaching",
                            },
                        }
                    ),
                )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
