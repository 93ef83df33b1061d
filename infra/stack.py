"""The paddle-idp stack: composes one construct per component and wires events, environment
and least-privilege grants between them. Read top to bottom, it is the architecture:

    S3 input ──event──► SQS job queue (+DLQ) ──► invoker ──┬─► OCR processor (async invoke)
                                                           └─► VL endpoint (async, 0..1 GPU)
    processor async failures ──► error topic ───────┐
    VL endpoint outcomes ──► success / error topics ┴─► completion handler
    idle-backlog alarm ──► scale-in topic ──► scale-in handler
    status table stream (a job COMPLETED or FAILED) ──► events function ──► event bus

With `privateNetwork`, all of it runs in a VPC with no route out (infra/network.py). Grants are
exact per role (docs/security.md lists each, a test holds the template to that list).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from aws_cdk import Aws, CfnOutput, Duration, Size, Stack
from constructs import Construct

from idp.contract import names
from idp.contract.env.functions import Env
from idp.contract.env.vl import VlEnv
from idp.contract.names import Output, Service
from idp.contract.topology import (
    CONVERSION_TIME_LIMIT_SECONDS,
    DISPATCH_LEASE_SECONDS,
    EVENTS_BATCH_SIZE,
    EVENTS_RETRY_ATTEMPTS,
    FUNCTIONS,
    PROCESSOR_ASYNC_MAX_EVENT_AGE_SECONDS,
    PROCESSOR_ASYNC_RETRY_ATTEMPTS,
    PROCESSOR_ON_FAILURE_TOPIC,
    QUEUE_MAX_RECEIVE_COUNT,
    QUEUE_VISIBILITY_TIMEOUT_SECONDS,
    STALE_PROCESSING_SECONDS,
    STALE_QUEUED_SECONDS,
    Function,
    Topic,
    converter_ephemeral_storage_mib,
    scale_in_alarm_name,
)
from infra.calls import (
    ConvertsOfficeDocuments,
    InvokesProcessor,
    PublishesJobEvents,
    ScalesVlEndpoint,
    SubmitsToVlEndpoint,
)
from infra.converter import OfficeConverter
from infra.dashboard import PipelineDashboard
from infra.encryption import DataKey
from infra.functions import Call, ZipBuild, powertools_layer, zip_code
from infra.image_function import ImageBuild
from infra.job_events import JobEventBus
from infra.log_groups import LogPolicy
from infra.network import PrivateNetwork
from infra.processor import OcrProcessor
from infra.queues import AsyncFailureQueue, JobQueue
from infra.settings import Settings
from infra.status_table import JobAccess, StatusTable
from infra.storage import Storage, input_bucket_name
from infra.topics import PipelineTopic
from infra.triggered_function import (
    QueueTrigger,
    ScheduleTrigger,
    TableStreamTrigger,
    TopicTrigger,
    Trigger,
    TriggeredFunction,
)
from infra.vl_endpoint import ENDPOINT_INSTANCE_NAMESPACE, VlEndpoint

REPO_ROOT: Final = Path(__file__).resolve().parent.parent


class PaddleIdpStack(Stack):
    """One stack, one construct per component; the VL path only when `settings.vl_enabled`."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: Settings,
        repo_root: Path = REPO_ROOT,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.settings = settings
        self._repo_root = repo_root

        # Data: one rotating key for every store; buckets, job queue, status table.
        self.data_key = DataKey(self, "DataKey", description=f"{names.PROJECT} data at rest")
        # Every log group under the same key: the functions' and flow logs' names begin with
        # the stack's (CloudFormation names them), SageMaker's with its endpoint path.
        self.data_key.allow_log_groups(
            [f"{self.stack_name}-*", f"{ENDPOINT_INSTANCE_NAMESPACE}/{self.vl_endpoint_name}"]
        )
        self._log_policy = LogPolicy(retention=settings.log_retention, key=self.data_key.key)
        self.storage = Storage(
            self,
            "Storage",
            data_key=self.data_key,
            access_log_retention=Duration.days(settings.access_log_retention_days),
            retention_days=settings.retention_days,
            input_bucket_name=input_bucket_name(self.stack_name, Aws.ACCOUNT_ID, Aws.REGION),
        )
        self.jobs = JobQueue(
            self,
            "JobQueue",
            data_key=self.data_key,
            visibility_timeout=Duration.seconds(QUEUE_VISIBILITY_TIMEOUT_SECONDS),
            max_receive_count=QUEUE_MAX_RECEIVE_COUNT,
        )
        self.storage.send_input_events_to(self.jobs.queue, suffixes=names.NOTIFICATION_SUFFIXES)
        self.status = StatusTable(self, "StatusTable", data_key=self.data_key)

        # Private-network mode: every function and the endpoint in a VPC with no route out.
        self.network = (
            PrivateNetwork(
                self,
                "PrivateNetwork",
                vl_enabled=settings.vl_enabled,
                log_policy=self._log_policy,
            )
            if settings.private_network
            else None
        )

        # Notifications: processor failures and VL errors share the error topic.
        self.topics = self._topics()
        self.async_failures = AsyncFailureQueue(
            self,
            "AsyncFailureQueue",
            data_key=self.data_key,
            redriven_topic_arns=[topic.topic_arn for topic in self.topics.values()],
        )
        self._environment = self._shared_environment()

        # The GPU path (absent when CPU-only), then the CPU path (container-image Lambdas built
        # from the repository root), which submits PaddleOCR-VL jobs to the endpoint.
        self.vl_endpoint = self._vl_endpoint() if settings.vl_enabled else None
        self._image_build = ImageBuild(
            repo_root=repo_root,
            environment=self._environment,
            log_policy=self._log_policy,
            network=self.network,
        )
        # Office documents become PDFs in a function of their own, which the processor calls.
        self.converter = self._converter()
        self.processor = self._processor()

        # Zip functions share one code asset and the Powertools layer.
        self._zip_build = ZipBuild(
            code=zip_code(repo_root),
            layers=[
                powertools_layer(self, "PowertoolsLayer", version=settings.powertools_layer_version)
            ],
            environment=self._environment,
            log_policy=self._log_policy,
            network=self.network,
        )
        self.invoker = self._invoker()
        self.completion = self._completion()
        self.scale_in = self._scale_in(self.vl_endpoint) if self.vl_endpoint is not None else None
        self.sweeper = self._sweeper()
        self.event_bus = JobEventBus(
            self, "JobEvents", data_key=self.data_key, dead_letter_queue=self.async_failures.queue
        )
        self.events = self._events(self.event_bus)

        self._dashboard()
        self._outputs()

    def _topics(self) -> dict[Topic, PipelineTopic]:
        wanted = [(Topic.ERROR, "paddle-idp job errors")]
        if self.settings.vl_enabled:
            wanted += [
                (Topic.SUCCESS, "paddle-idp VL results"),
                (Topic.SCALE_IN, "paddle-idp scale-in"),
            ]
        return {
            topic: PipelineTopic(
                self,
                topic.value,
                data_key=self.data_key,
                display_name=label,
                topic_name=f"{self.stack_name}-{topic.value}",
            )
            for topic, label in wanted
        }

    @property
    def vl_endpoint_name(self) -> str:
        return f"{self.stack_name}-vl"

    def _shared_environment(self) -> dict[Env, str]:
        """Every value a function may read; each function gets the keys its spec declares."""
        settings = self.settings
        return {
            Env.JOBS_TABLE: self.status.table.table_name,
            Env.INPUT_BUCKET: self.storage.input_bucket.bucket_name,
            Env.RESULTS_BUCKET: self.storage.results_bucket.bucket_name,
            Env.MODEL_CACHE_BUCKET: self.storage.model_cache_bucket.bucket_name,
            Env.MAX_PAGES: str(settings.max_pages),
            Env.MAX_INPUT_BYTES: str(settings.max_input_bytes),
            Env.CHUNK_PAGES: str(settings.chunk_pages),
            Env.ALLOW_HUB_DOWNLOAD: _flag(settings.allow_hub_download),
            Env.PPOCRV6_SIZE: settings.ppocrv6_size,
            Env.DISPATCH_LEASE_SECONDS: str(DISPATCH_LEASE_SECONDS),
            Env.RETENTION_DAYS: str(settings.retention_days),
            Env.PRODUCER_PREFIXES: settings.producer_prefixes,
            Env.STALE_PROCESSING_SECONDS: str(STALE_PROCESSING_SECONDS),
            Env.STALE_QUEUED_SECONDS: str(STALE_QUEUED_SECONDS),
            Env.CONVERSION_TIME_LIMIT: str(CONVERSION_TIME_LIMIT_SECONDS),
        }

    def _processor(self) -> OcrProcessor:
        """The processor and every grant it has: what it reads and writes, and whom it calls."""
        processor = OcrProcessor(
            self,
            Function.PROCESSOR.value,
            spec=replace(
                FUNCTIONS[Function.PROCESSOR], memory_mb=self.settings.processor_memory_mb
            ),
            build=self._image_build,
            ephemeral_storage_mib=self.settings.processor_ephemeral_storage_mib,
            reserved_concurrency=self.settings.processor_reserved_concurrency or None,
            retry_attempts=PROCESSOR_ASYNC_RETRY_ATTEMPTS,
            max_event_age=Duration.seconds(PROCESSOR_ASYNC_MAX_EVENT_AGE_SECONDS),
            on_failure_topic=self.topics[PROCESSOR_ON_FAILURE_TOPIC].topic,
            calls=[
                SubmitsToVlEndpoint(self.vl_endpoint, self.storage),
                ConvertsOfficeDocuments(self.converter),
            ],
        )
        self.topics[PROCESSOR_ON_FAILURE_TOPIC].grant_publish(processor.role)
        self.storage.grant_read_input(processor.role)
        self.storage.grant_read_write_results(processor.role)
        self.storage.grant_chunk_work(processor.role)
        # Read only: the cache is written by an operator (`idp models sync`), never by a
        # function that parses untrusted documents.
        self.storage.grant_read_model_cache(processor.role)
        self.status.grant_job_access(processor.role, JobAccess.READ, JobAccess.UPDATE)
        return processor

    def _converter(self) -> OfficeConverter:
        """The Office converter: no S3, KMS or table grant at all. It reads its job's input
        and writes its job's converted PDF through the presigned URLs the processor gives it."""
        converter = OfficeConverter(
            self,
            Function.CONVERTER.value,
            spec=FUNCTIONS[Function.CONVERTER],
            build=self._image_build,
            ephemeral_storage_size=Size.mebibytes(
                converter_ephemeral_storage_mib(self.settings.max_input_bytes)
            ),
        )
        return converter

    def _vl_endpoint(self) -> VlEndpoint:
        settings, storage = self.settings, self.storage
        endpoint = VlEndpoint(
            self,
            "VlEndpoint",
            repo_root=self._repo_root,
            endpoint_name=self.vl_endpoint_name,
            instance_type=settings.vl_instance_type,
            environment={
                Env.MODEL_CACHE_BUCKET.value: storage.model_cache_bucket.bucket_name,
                Env.ALLOW_HUB_DOWNLOAD.value: _flag(settings.allow_hub_download),
                Env.MAX_PAGES.value: str(min(settings.max_pages, names.VL_MAX_PAGES)),
                Env.MAX_INPUT_BYTES.value: str(settings.max_input_bytes),
                Env.POWERTOOLS_SERVICE_NAME.value: Service.VL_ENDPOINT.value,
                Env.POWERTOOLS_METRICS_NAMESPACE.value: names.METRICS_NAMESPACE,
                VlEnv.MAX_CONCURRENT_REQUESTS.value: str(names.VL_MAX_CONCURRENT_INVOCATIONS),
                # Below the invocation timeout the invoker passes, so that the container's
                # own 504 (with its reason) ends a slow request before SageMaker does.
                VlEnv.REQUEST_TIMEOUT_SECONDS.value: str(names.VL_REQUEST_TIMEOUT_SECONDS),
            },
            output_bucket=storage.results_bucket,
            data_key=self.data_key,
            success_topic=self.topics[Topic.SUCCESS].topic,
            error_topic=self.topics[Topic.ERROR].topic,
            scale_in_topic=self.topics[Topic.SCALE_IN].topic,
            scale_in_alarm_name=scale_in_alarm_name(self.stack_name),
            log_policy=self._log_policy,
            network=self.network,
        )
        # CloudWatch publishes the scale-in alarm into the encrypted topic as its service
        # principal; the alarm waits for that Allow, or its first notification would be refused
        # (and an alarm notifies only on a state change, so it would not come again).
        scale_in_topic = self.topics[Topic.SCALE_IN]
        scale_in_topic.allow_service_publish(
            service_principal="cloudwatch.amazonaws.com", source_arn=endpoint.scale_in_alarm_arn
        )
        endpoint.scale_in_alarm.node.add_dependency(scale_in_topic.policy)
        storage.grant_read_input(endpoint.execution_role)
        storage.grant_read_vl_manifests(endpoint.execution_role)
        storage.grant_read_chunk_inputs(endpoint.execution_role)
        storage.grant_write_vl_outcomes(endpoint.execution_role)
        storage.grant_read_model_cache(endpoint.execution_role)
        return endpoint

    def _zip_function(
        self,
        function: Function,
        *,
        description: str,
        trigger: Trigger,
        calls: Sequence[Call] = (),
    ) -> TriggeredFunction:
        zipped = TriggeredFunction(
            self,
            function.value,
            spec=FUNCTIONS[function],
            build=self._zip_build,
            description=description,
            trigger=trigger,
            calls=calls,
        )
        if trigger.failure_queue is not None:  # the stack's queue of failed async events
            self.async_failures.grant_dead_lettering(zipped.role)
        return zipped

    def _invoker(self) -> TriggeredFunction:
        invoker = self._zip_function(
            Function.INVOKER,
            description="Records job messages QUEUED and hands each to the OCR processor",
            trigger=QueueTrigger(self.jobs.queue, batch_size=self.settings.invoker_batch_size),
            # Every job goes to the processor; a VL job's endpoint is scaled out 0 -> 1 first.
            calls=[InvokesProcessor(self.processor), ScalesVlEndpoint(self.vl_endpoint)],
        )
        self.storage.grant_read_input(invoker.role)
        self.status.grant_job_access(
            invoker.role, JobAccess.CREATE, JobAccess.READ, JobAccess.UPDATE
        )
        return invoker

    def _completion(self) -> TriggeredFunction:
        spec = FUNCTIONS[Function.COMPLETION]
        vl = self.vl_endpoint is not None
        completion = self._zip_function(
            Function.COMPLETION,
            description="Records failures and hands VL results to the OCR processor",
            # CPU-only deployments have the error topic alone (processor failures).
            trigger=TopicTrigger(
                [self.topics[t].topic for t in spec.topics if t in self.topics],
                failure_queue=self.async_failures.queue,
            ),
            # A successful VL inference is the processor's to finish (result files, chunks).
            calls=[InvokesProcessor(self.processor, granted=vl)],
        )
        if vl:
            # A failed inference's failure object, and a chunked job's plan (its chunks' pages).
            self.storage.grant_read_vl_failures(completion.role)
            self.storage.grant_read_chunk_plans(completion.role)
        self.status.grant_job_access(completion.role, JobAccess.READ, JobAccess.UPDATE)
        return completion

    def _scale_in(self, vl_endpoint: VlEndpoint) -> TriggeredFunction:
        return self._zip_function(
            Function.SCALE_IN,
            description="Scales the idle VL endpoint in to zero instances",
            trigger=TopicTrigger(
                [self.topics[Topic.SCALE_IN].topic], failure_queue=self.async_failures.queue
            ),
            calls=[ScalesVlEndpoint(vl_endpoint)],
        )

    def _sweeper(self) -> TriggeredFunction:
        spec = FUNCTIONS[Function.SWEEPER]
        if spec.schedule_minutes is None:
            raise ValueError(
                f"the {Function.SWEEPER} spec in idp.contract.topology has no schedule"
            )
        schedule_name = f"{self.stack_name}-{Function.SWEEPER.value}"
        sweeper = self._zip_function(
            Function.SWEEPER,
            description="Ends jobs stuck in QUEUED or PROCESSING past every deadline",
            trigger=ScheduleTrigger(
                Duration.minutes(spec.schedule_minutes),
                failure_queue=self.async_failures.queue,
                rule_name=schedule_name,
            ),
        )
        # EventBridge itself writes the schedule's undeliverable events into the encrypted
        # queue (CDK adds the queue policy for the rule; the key policy is ours to add).
        schedule_arn = self.format_arn(
            service="events", resource="rule", resource_name=schedule_name
        )
        self.data_key.allow_service("events.amazonaws.com", source_arns=[schedule_arn])
        self.status.grant_job_access(sweeper.role, JobAccess.LIST_BY_STATUS, JobAccess.UPDATE)
        return sweeper

    def _events(self, bus: JobEventBus) -> TriggeredFunction:
        events = self._zip_function(
            Function.EVENTS,
            description="Publishes one job-finished event when a job's record turns terminal",
            trigger=TableStreamTrigger(
                self.status.table,
                failure_queue=self.async_failures.queue,
                batch_size=EVENTS_BATCH_SIZE,
                retry_attempts=EVENTS_RETRY_ATTEMPTS,
            ),
            calls=[PublishesJobEvents(bus)],
        )
        # The stream's records are encrypted with the table's key; the mapping's failure
        # records go to the encrypted failure queue.
        self.status.grant_stream_read(events.role)
        return events

    def _dashboard(self) -> None:
        functions = [
            ("Invoker", self.invoker.function),
            ("OCR processor", self.processor.function),
            ("Office converter", self.converter.function),
            ("Completion", self.completion.function),
            ("Stale-job sweeper", self.sweeper.function),
            ("Job events", self.events.function),
        ]
        if self.scale_in is not None:
            functions.append(("Scale-in", self.scale_in.function))
        PipelineDashboard(
            self,
            "Dashboard",
            job_queue=self.jobs.queue,
            dead_letter_queues=[
                ("Job DLQ", self.jobs.dead_letter_queue),
                ("Async failures", self.async_failures.queue),
            ],
            processor=self.processor.function,
            functions=functions,
            vl_endpoint=self.vl_endpoint,
        )

    def _outputs(self) -> None:
        """Every name a user (and the idp CLI) needs; no endpoint name when CPU-only."""
        outputs = {
            Output.INPUT_BUCKET: self.storage.input_bucket.bucket_name,
            Output.RESULTS_BUCKET: self.storage.results_bucket.bucket_name,
            Output.MODEL_CACHE_BUCKET: self.storage.model_cache_bucket.bucket_name,
            Output.JOBS_TABLE: self.status.table.table_name,
            Output.JOB_QUEUE_URL: self.jobs.queue.queue_url,
            Output.DLQ_URL: self.jobs.dead_letter_queue.queue_url,
            Output.PROCESSOR_FUNCTION: self.processor.function.function_name,
            Output.EVENT_BUS: self.event_bus.bus.event_bus_name,
            Output.DATA_KEY_ARN: self.data_key.key.key_arn,
        }
        if self.vl_endpoint is not None:
            outputs[Output.VL_ENDPOINT] = self.vl_endpoint.endpoint_name
        for output, value in outputs.items():
            CfnOutput(self, output.value, value=value)


def _flag(value: bool) -> str:
    return "true" if value else "false"
