"""The local runtime: does what AWS does between the pipeline's components.

It composes one module per emulated service and starts and stops them together:
- the SQS event source feeding the invoker (devkit.local.sqs_source);
- Lambda: the deployed functions and the Invoke API (devkit.local.lambda_service), async invokes
  with the stack's retries and on-failure destination (devkit.local.lambda_async);
- SNS → Lambda delivery for the completion and scale-in handlers (devkit.local.sns_delivery);
- the EventBridge schedule of the sweeper (devkit.local.schedule);
- the jobs table's stream feeding the events function (devkit.local.stream_source), whose events
  the emulator's EventBridge delivers to a rule's queue (devkit.local.resources);
- the VL endpoint: the real container server process with SageMaker async semantics
  (devkit.local.vl_endpoint);
- the scale-in alarm, evaluated from the endpoint's backlog and delivered to its topic
  (devkit.local.alarm);
- the faults a test asks for (devkit.local.faults).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from devkit.local.alarm import ScaleInAlarm
from devkit.local.context import RuntimeStats, ServiceContext
from devkit.local.faults import DynamoDbFaultProxy, FaultCounter
from devkit.local.lambda_service import LambdaService
from devkit.local.loops import Loops
from devkit.local.schedule import Schedule
from devkit.local.service_api import LocalServiceApi
from devkit.local.sns_delivery import SnsDelivery
from devkit.local.sqs_source import SqsEventSource
from devkit.local.stream_source import TableStreamSource
from devkit.local.vl_endpoint import VlEndpointSimulator
from idp.contract import names
from idp.contract.topology import FUNCTIONS, Function

if TYPE_CHECKING:
    from devkit.local.emulator import AwsEndpoint
    from devkit.local.faults import LambdaFaults
    from devkit.local.resources import LocalResources
    from devkit.local.settings import LocalSettings


class LocalRuntime:
    """Runs the pipeline's functions and the glue between them, on loopback only."""

    def __init__(
        self, *, endpoint: AwsEndpoint, resources: LocalResources, settings: LocalSettings
    ) -> None:
        self.endpoint = endpoint
        self.resources = resources
        self.settings = settings
        self._context = ServiceContext(endpoint=endpoint, resources=resources, settings=settings)
        self.stats: RuntimeStats = self._context.stats
        self._loops = Loops(self._context.stop)
        self.lambda_service = LambdaService(self._context)
        self.lambda_faults: LambdaFaults = self.lambda_service.faults  # how often each fired
        self.vl = VlEndpointSimulator(self._context)
        self.api = LocalServiceApi(
            lambda_invoke=self.lambda_service.on_invoke_api,
            invoke_endpoint_async=self.vl.accept,
        )
        faults = settings.faults
        self.dynamodb_proxy: DynamoDbFaultProxy | None = None
        if (faults.dynamodb_write_throttles or faults.merge_crashes) and endpoint.url:
            self.dynamodb_proxy = DynamoDbFaultProxy(
                upstream=endpoint.url,
                throttles=FaultCounter(
                    faults.dynamodb_write_throttles, every=faults.dynamodb_throttle_every
                ),
                after_write=self._after_write,
            )

    def _after_write(self, write: dict[str, Any]) -> None:
        """Every UpdateItem that succeeded through the fault proxy: the merge claims are
        counted (a job claimed by two invocations was merged twice), then any merge crash."""
        claimed_by = write.get("ExpressionAttributeValues", {}).get(":inv", {}).get("S")
        if "merge_invocation" in str(write.get("UpdateExpression", "")) and claimed_by:
            job_id = str(write.get("Key", {}).get(names.JOB_ID_ATTR, {}).get("S"))
            self.stats.merge_claims.setdefault(job_id, set()).add(str(claimed_by))
        if self.settings.faults.merge_crashes:
            self.lambda_faults.crash_after_merge_claim(write)

    def start(self) -> None:
        self.api.start()
        if self.dynamodb_proxy is not None:
            self.dynamodb_proxy.start()
        self.lambda_service.deploy(
            runtime_api_url=self.api.url,
            dynamodb_url=self.dynamodb_proxy.url if self.dynamodb_proxy is not None else None,
        )
        context, lambda_service = self._context, self.lambda_service
        async_invokes = lambda_service.async_invokes
        job_queue = SqsEventSource(context, Function.INVOKER, lambda_service.invoke)
        self._loops.spawn("sqs-event-source", job_queue.run)
        for _ in range(self.settings.processor_concurrency):
            self._loops.spawn("async-invoke", async_invokes.run_worker)
        for function in self.resources.delivery_queue_urls:
            delivery = SnsDelivery(context, function, async_invokes.invoke)
            self._loops.spawn(f"sns-{function.value}", delivery.run)
        for function, spec in FUNCTIONS.items():
            if spec.schedule_minutes is not None:
                schedule = Schedule(context, function, async_invokes.invoke)
                self._loops.spawn(f"schedule-{function.value}", schedule.run)
            if spec.table_stream:
                stream = TableStreamSource(context, function, lambda_service.invoke)
                self._loops.spawn(f"stream-{function.value}", stream.run)
        if self.settings.vl_enabled:
            self.vl.start()
            alarm = ScaleInAlarm(context, self.vl.backlog_per_instance)
            self._loops.spawn("scale-in-alarm", alarm.run)

    def stop(self) -> None:
        self._context.stop.set()
        self.lambda_service.async_invokes.wake_workers()
        self._loops.join()
        self.vl.stop()
        self.lambda_service.shutdown()
        self.api.stop()
        if self.dynamodb_proxy is not None:
            self.dynamodb_proxy.stop()
