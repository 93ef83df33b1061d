"""Create in the emulator the resources the CDK stack deploys, from the same names and specs."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, NamedTuple

from devkit.client import PipelineNames
from devkit.local.emulator import ACCOUNT_ID, AwsEndpoint
from idp.contract import names, topology
from idp.contract.env.functions import Env
from idp.contract.events import EVENT_SOURCE
from idp.contract.topology import FUNCTIONS, Function, Topic, scale_in_alarm_name
from idp.jobstore.store import jobs_table_definition

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_sagemaker import SageMakerClient
    from mypy_boto3_sqs import SQSClient

LOCAL_PREFIX = "paddle-idp-local"
# moto rejects GPU instance types; the emulated endpoint uses a CPU type (SPEC, emulator facts).
LOCAL_VL_INSTANCE_TYPE: Final = "ml.m5.large"


class _LocalNames(NamedTuple):
    """The names `provision` gives a local pipeline's resources, derived from its prefix alone
    so that `pipeline_names` finds them again."""

    input_bucket: str
    results_bucket: str
    model_cache_bucket: str
    jobs_table: str
    job_queue: str
    job_dlq: str
    vl_endpoint: str
    scale_in_alarm: str

    @classmethod
    def of(cls, prefix: str) -> _LocalNames:
        return cls(
            input_bucket=f"{prefix}-input",
            results_bucket=f"{prefix}-results",
            model_cache_bucket=f"{prefix}-model-cache",
            jobs_table=f"{prefix}-jobs",
            job_queue=f"{prefix}-jobs",
            job_dlq=f"{prefix}-jobs-dlq",
            vl_endpoint=f"{prefix}-vl",
            scale_in_alarm=scale_in_alarm_name(prefix),
        )


def pipeline_names(endpoint: AwsEndpoint, prefix: str = LOCAL_PREFIX) -> PipelineNames:
    """What a client needs to reach a running local pipeline (`idp local up`)."""
    sqs = endpoint.client("sqs")
    local = _LocalNames.of(prefix)
    vl_endpoint = local.vl_endpoint
    listed = endpoint.client("sagemaker").list_endpoints(NameContains=vl_endpoint)["Endpoints"]
    vl_enabled = any(item["EndpointName"] == vl_endpoint for item in listed)
    return PipelineNames(
        input_bucket=local.input_bucket,
        results_bucket=local.results_bucket,
        jobs_table=local.jobs_table,
        queue_url=sqs.get_queue_url(QueueName=local.job_queue)["QueueUrl"],
        dlq_url=sqs.get_queue_url(QueueName=local.job_dlq)["QueueUrl"],
        model_cache_bucket=local.model_cache_bucket,
        vl_endpoint=vl_endpoint if vl_enabled else None,
        vl_scale_in_alarm=local.scale_in_alarm if vl_enabled else None,
    )


@dataclass(frozen=True)
class LocalResources:
    """Names of everything created in the emulator for one local pipeline."""

    prefix: str
    region: str
    input_bucket: str
    results_bucket: str
    model_cache_bucket: str
    jobs_table: str
    queue_url: str
    queue_arn: str
    dlq_url: str
    topic_arns: dict[Topic, str]
    delivery_queue_urls: dict[Function, str]  # SNS → function delivery (the Lambda subscription)
    function_names: dict[Function, str]
    vl_endpoint: str
    scale_in_alarm: str
    visibility_timeout_seconds: int
    table_stream_arn: str  # the jobs table's stream (the events function's source)
    event_bus: str  # job-finished events
    events_queue_url: str  # a rule's target on the bus: the events a user would receive

    def function_env(
        self,
        function: Function,
        *,
        vl_enabled: bool,
        overrides: Mapping[Env, str] | None = None,
    ) -> dict[str, str]:
        """The environment the stack gives this function, with emulator names filled in."""
        values: dict[Env, str] = {
            Env.JOBS_TABLE: self.jobs_table,
            Env.INPUT_BUCKET: self.input_bucket,
            Env.RESULTS_BUCKET: self.results_bucket,
            Env.MODEL_CACHE_BUCKET: self.model_cache_bucket,
            Env.PROCESSOR_FUNCTION: self.function_names[Function.PROCESSOR],
            Env.CONVERTER_FUNCTION: self.function_names[Function.CONVERTER],
            Env.CONVERSION_TIME_LIMIT: str(topology.CONVERSION_TIME_LIMIT_SECONDS),
            Env.VL_ENDPOINT_NAME: self.vl_endpoint,
            Env.VL_VARIANT_NAME: names.VL_VARIANT_NAME,
            Env.VL_SCALE_IN_ALARM_NAME: self.scale_in_alarm,
            Env.VL_ENABLED: "true" if vl_enabled else "false",
            Env.MAX_PAGES: str(names.DEFAULT_MAX_PAGES),
            Env.MAX_INPUT_BYTES: str(names.DEFAULT_MAX_INPUT_BYTES),
            Env.CHUNK_PAGES: str(names.DEFAULT_CHUNK_PAGES),
            Env.ALLOW_HUB_DOWNLOAD: "false",
            Env.PPOCRV6_SIZE: names.DEFAULT_PPOCRV6_SIZE,
            Env.POWERTOOLS_SERVICE_NAME: FUNCTIONS[function].service.value,
            Env.POWERTOOLS_METRICS_NAMESPACE: names.METRICS_NAMESPACE,
            Env.DISPATCH_LEASE_SECONDS: str(topology.DISPATCH_LEASE_SECONDS),
            Env.RETENTION_DAYS: str(names.DEFAULT_RETENTION_DAYS),
            Env.PRODUCER_PREFIXES: "",
            Env.STALE_PROCESSING_SECONDS: str(topology.STALE_PROCESSING_SECONDS),
            Env.STALE_QUEUED_SECONDS: str(topology.STALE_QUEUED_SECONDS),
            Env.EVENT_BUS_NAME: self.event_bus,
            **(overrides or {}),
        }
        return {key.value: values[key] for key in FUNCTIONS[function].env}


def provision(
    endpoint: AwsEndpoint,
    *,
    prefix: str = LOCAL_PREFIX,
    visibility_timeout_seconds: int = topology.QUEUE_VISIBILITY_TIMEOUT_SECONDS,
    vl_enabled: bool = True,
) -> LocalResources:
    """Create buckets, table, queues, topics, notifications and the scaled-to-0 VL endpoint."""
    s3 = endpoint.client("s3")
    sqs = endpoint.client("sqs")
    sns = endpoint.client("sns")
    dynamodb = endpoint.client("dynamodb")
    sagemaker = endpoint.client("sagemaker")
    cloudwatch = endpoint.client("cloudwatch")

    local = _LocalNames.of(prefix)
    input_bucket, results_bucket = local.input_bucket, local.results_bucket
    for bucket in (input_bucket, results_bucket, local.model_cache_bucket):
        s3.create_bucket(Bucket=bucket)
    # The job id derives from the object version, as in the stack's versioned input bucket.
    s3.put_bucket_versioning(Bucket=input_bucket, VersioningConfiguration={"Status": "Enabled"})

    jobs_table = local.jobs_table
    table = dynamodb.create_table(**jobs_table_definition(jobs_table))["TableDescription"]
    event_bus, events_queue_url = _event_bus(endpoint, prefix)

    dlq_url = sqs.create_queue(QueueName=local.job_dlq)["QueueUrl"]
    dlq_arn = _queue_arn(sqs, dlq_url)
    queue_url = sqs.create_queue(
        QueueName=local.job_queue,
        Attributes={
            "VisibilityTimeout": str(visibility_timeout_seconds),
            "RedrivePolicy": json.dumps(
                {
                    "deadLetterTargetArn": dlq_arn,
                    "maxReceiveCount": topology.QUEUE_MAX_RECEIVE_COUNT,
                }
            ),
        },
    )["QueueUrl"]
    queue_arn = _queue_arn(sqs, queue_url)
    s3.put_bucket_notification_configuration(
        Bucket=input_bucket,
        NotificationConfiguration={
            "QueueConfigurations": [
                {
                    "QueueArn": queue_arn,
                    "Events": ["s3:ObjectCreated:*"],
                    "Filter": {
                        "Key": {
                            "FilterRules": [
                                {"Name": "prefix", "Value": names.INPUT_PREFIX},
                                {"Name": "suffix", "Value": suffix},
                            ]
                        }
                    },
                }
                for suffix in names.NOTIFICATION_SUFFIXES
            ]
        },
    )

    topic_arns = {
        topic: sns.create_topic(Name=f"{prefix}-{topic.value}")["TopicArn"] for topic in Topic
    }
    delivery_queue_urls: dict[Function, str] = {}
    for function, spec in FUNCTIONS.items():
        if not spec.topics:
            continue
        url = sqs.create_queue(QueueName=f"{prefix}-{function.value}-sns")["QueueUrl"]
        delivery_queue_urls[function] = url
        for topic in spec.topics:
            sns.subscribe(TopicArn=topic_arns[topic], Protocol="sqs", Endpoint=_queue_arn(sqs, url))

    function_names = {function: f"{prefix}-{function.value}" for function in Function}

    vl_endpoint = local.vl_endpoint
    if vl_enabled:
        _create_scaled_in_endpoint(
            sagemaker,
            endpoint_name=vl_endpoint,
            results_bucket=results_bucket,
            topic_arns=topic_arns,
        )
    scale_in_alarm = local.scale_in_alarm
    put_scale_in_alarm(
        cloudwatch,
        alarm_name=scale_in_alarm,
        endpoint_name=vl_endpoint,
        actions=[topic_arns[Topic.SCALE_IN]],
    )
    return LocalResources(
        prefix=prefix,
        region=endpoint.region,
        input_bucket=input_bucket,
        results_bucket=results_bucket,
        model_cache_bucket=local.model_cache_bucket,
        jobs_table=jobs_table,
        queue_url=queue_url,
        queue_arn=queue_arn,
        dlq_url=dlq_url,
        topic_arns=topic_arns,
        delivery_queue_urls=delivery_queue_urls,
        function_names=function_names,
        vl_endpoint=vl_endpoint,
        scale_in_alarm=scale_in_alarm,
        visibility_timeout_seconds=visibility_timeout_seconds,
        table_stream_arn=table["LatestStreamArn"],
        event_bus=event_bus,
        events_queue_url=events_queue_url,
    )


def _event_bus(endpoint: AwsEndpoint, prefix: str) -> tuple[str, str]:
    """The job-finished event bus, and a queue that a rule on it feeds with every event (what
    a subscriber would receive; `idp local run --events` reads it)."""
    events, sqs = endpoint.client("events"), endpoint.client("sqs")
    bus = f"{prefix}-events"
    events.create_event_bus(Name=bus)
    queue_url = sqs.create_queue(QueueName=f"{prefix}-events-received")["QueueUrl"]
    rule = f"{prefix}-every-job-event"
    events.put_rule(
        Name=rule, EventBusName=bus, EventPattern=json.dumps({"source": [EVENT_SOURCE]})
    )
    events.put_targets(
        Rule=rule,
        EventBusName=bus,
        Targets=[{"Id": "received", "Arn": _queue_arn(sqs, queue_url)}],
    )
    return bus, queue_url


def _queue_arn(sqs: SQSClient, url: str) -> str:
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
    return str(attributes["Attributes"]["QueueArn"])


def _create_scaled_in_endpoint(
    sagemaker: SageMakerClient,
    *,
    endpoint_name: str,
    results_bucket: str,
    topic_arns: dict[Topic, str],
) -> None:
    model_name = f"{endpoint_name}-model"
    config_name = f"{endpoint_name}-config"
    sagemaker.create_model(
        ModelName=model_name,
        ExecutionRoleArn=f"arn:aws:iam::{ACCOUNT_ID}:role/{endpoint_name}-execution",
        PrimaryContainer={"Image": f"{ACCOUNT_ID}.dkr.ecr.us-east-1.amazonaws.com/vl:local"},
    )
    sagemaker.create_endpoint_config(
        EndpointConfigName=config_name,
        ProductionVariants=[
            {
                "VariantName": names.VL_VARIANT_NAME,
                "ModelName": model_name,
                "InitialInstanceCount": 1,
                "InstanceType": LOCAL_VL_INSTANCE_TYPE,
            }
        ],
        AsyncInferenceConfig={
            "ClientConfig": {
                "MaxConcurrentInvocationsPerInstance": names.VL_MAX_CONCURRENT_INVOCATIONS
            },
            "OutputConfig": {
                "S3OutputPath": f"s3://{results_bucket}/{names.VL_OUTPUT_PREFIX}",
                "S3FailurePath": f"s3://{results_bucket}/{names.VL_FAILURE_PREFIX}",
                "NotificationConfig": {
                    "SuccessTopic": topic_arns[Topic.SUCCESS],
                    "ErrorTopic": topic_arns[Topic.ERROR],
                },
            },
        },
    )
    sagemaker.create_endpoint(EndpointName=endpoint_name, EndpointConfigName=config_name)
    # The deployed endpoint reaches 0 through the idle alarm; locally it starts there.
    sagemaker.update_endpoint_weights_and_capacities(
        EndpointName=endpoint_name,
        DesiredWeightsAndCapacities=[
            {"VariantName": names.VL_VARIANT_NAME, "DesiredInstanceCount": 0}
        ],
    )


def put_scale_in_alarm(
    cloudwatch: CloudWatchClient,
    *,
    alarm_name: str,
    endpoint_name: str,
    actions: Sequence[str] = (),
) -> None:
    """The VL endpoint's idle-backlog alarm, defined as the stack defines it."""
    cloudwatch.put_metric_alarm(
        AlarmName=alarm_name,
        Namespace="AWS/SageMaker",
        MetricName="ApproximateBacklogSizePerInstance",
        Dimensions=[{"Name": "EndpointName", "Value": endpoint_name}],
        Statistic="Average",
        Period=names.SCALE_IN_PERIOD_SECONDS,
        EvaluationPeriods=names.SCALE_IN_EVALUATION_PERIODS,
        Threshold=names.SCALE_IN_BACKLOG_THRESHOLD,
        ComparisonOperator="LessThanThreshold",
        TreatMissingData="breaching",
        AlarmActions=list(actions),
    )
