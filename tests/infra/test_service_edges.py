"""Every service-to-service edge of the stack is allowed, proved on the synthesized template.

The emulator never evaluates resource or key policies, so an edge that IAM would refuse in AWS
(CloudWatch publishing into a topic whose policy holds only a Deny, EventBridge writing into a
queue under a key that does not name it) passes every emulated test. Here each edge is a row of
EDGES: the calls it makes, and for each the policy that must grant it (tests/infra/policies.py
evaluates them), or why that kind of policy does not apply. A completeness test enumerates the
edges the template wires (event sources, permissions, subscriptions, destinations, targets,
alarm actions, notifications, dead-letter queues, execution roles) and fails on any edge
without a row.

Condition keys a service sends (modelled in `as_service`): AWS services that act as their
service principal send aws:SourceArn (the resource they act for: bucket, topic, rule, alarm)
and aws:SourceAccount with the resource call (SNS, SQS and Lambda document this), and AWS
documents aws:SourceAccount for their key use too (S3, SNS, CloudWatch, EventBridge); the key
policy therefore requires only aws:SourceAccount (see infra/encryption.py).

Why SageMaker's notifications need no topic-policy Allow: an async endpoint publishes its
success and error notifications, and writes its output, with the endpoint's execution role, a
role of the topic's own account. Within one account, a request is allowed when either the
identity policy or the resource policy allows it and none denies it; the topic policy (only
the TLS Deny) denies nothing sent over TLS, so the role's sns:Publish suffices. Only callers
that act as a service principal (CloudWatch, EventBridge, S3, SNS) need the resource policy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

import pytest

from idp.contract import names
from idp.contract.env.functions import Env
from idp.contract.topology import FUNCTIONS, Function, Topic
from infra.vl_endpoint import SCALABLE_DIMENSION
from tests.infra.policies import (
    ACCOUNT,
    PARTITION,
    REGION,
    Policies,
    Request,
    Role,
    Service,
    Via,
)
from tests.infra.support import Synthesized, as_list, ref

SYNTHS: Final = ("full", "cpu_only")
TLS: Final = {"aws:SecureTransport": "true"}
SCALING_SERVICE_LINKED_ROLE: Final = "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint"

S3: Final = Service("s3.amazonaws.com")
SNS: Final = Service("sns.amazonaws.com")
CLOUDWATCH: Final = Service("cloudwatch.amazonaws.com")
EVENTS: Final = Service("events.amazonaws.com")
LAMBDA: Final = Service("lambda.amazonaws.com")
SAGEMAKER: Final = Service("sagemaker.amazonaws.com")

# What a writer into an encrypted queue, topic or object needs of the key (SQS, SNS, S3 docs).
ENCRYPT: Final = ("kms:GenerateDataKey", "kms:Decrypt")
DECRYPT: Final = ("kms:Decrypt",)
SCALE: Final = (
    "sagemaker:DescribeEndpoint",
    "sagemaker:UpdateEndpointWeightsAndCapacities",
)
CONSUME: Final = (
    "sqs:ReceiveMessage",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
    "sqs:ChangeMessageVisibility",
)


# The deployed stack, by component ----------------------------------------------------------


class Deployment:
    """A synthesized stack with its policies, looked up by the components' construct paths."""

    def __init__(self, synth: Synthesized) -> None:
        self.synth = synth
        self.policies = Policies(synth)
        self.resolve = self.policies.resolver.resolve

    def id(self, construct_path: str) -> str:
        return self.synth.logical_id(construct_path)

    def arn(self, logical_id: str) -> str:
        kind = self.synth.resources[logical_id]["Type"]
        if kind in ("AWS::SNS::Topic", "AWS::SageMaker::Endpoint"):
            return str(self.resolve(ref(logical_id)))  # their Ref is the ARN
        return str(self.resolve({"Fn::GetAtt": [logical_id, "Arn"]}))

    def function(self, function: Function) -> str:
        return self.synth.function_by_handler(FUNCTIONS[function].handler)[0]

    def has(self, function: Function) -> bool:
        try:
            self.function(function)
        except AssertionError:
            return False
        return True

    def role(self, function: Function) -> Role:
        role_id = self.synth.props(self.function(function))["Role"]["Fn::GetAtt"][0]
        return Role(role_id)

    def topic(self, topic: Topic) -> str:
        return self.id(f"{topic.value}/{topic.value}")

    @property
    def key(self) -> str:
        return self.arn(self.synth.only("AWS::KMS::Key")[0])

    @property
    def job_queue(self) -> str:
        return self.id("JobQueue/Queue")

    @property
    def job_dead_letter_queue(self) -> str:
        return self.id("JobQueue/DeadLetterQueue")

    @property
    def async_failures(self) -> str:
        return self.id("AsyncFailureQueue/Queue")

    def bucket(self, name: str) -> str:
        return self.id(f"Storage/{name}Bucket")

    def object_arn(self, bucket: str, key: str) -> str:
        return f"{self.arn(self.bucket(bucket))}/{key}"

    @property
    def status_table(self) -> str:
        return self.synth.only("AWS::DynamoDB::Table")[0]

    @property
    def table_stream(self) -> str:
        return str(self.resolve({"Fn::GetAtt": [self.status_table, "StreamArn"]}))

    @property
    def event_bus(self) -> str:
        return self.synth.only("AWS::Events::EventBus")[0]

    @property
    def sweeper_rule(self) -> str:
        return self.id("StaleJobSweeper/Schedule")

    @property
    def endpoint(self) -> str:
        return self.synth.only("AWS::SageMaker::Endpoint")[0]

    @property
    def endpoint_config(self) -> str:
        return self.synth.only("AWS::SageMaker::EndpointConfig")[0]

    @property
    def execution_role(self) -> Role:
        _, model = self.synth.only("AWS::SageMaker::Model")
        return Role(model["ExecutionRoleArn"]["Fn::GetAtt"][0])

    @property
    def scale_in_alarm(self) -> str:
        return self.id("VlEndpoint/ScaleInAlarm")

    @property
    def scale_out_alarm(self) -> str:
        (alarm,) = [
            logical_id
            for logical_id, alarm in self.synth.of_type("AWS::CloudWatch::Alarm").items()
            if alarm["Properties"]["MetricName"] == "HasBacklogWithoutCapacity"
        ]
        return alarm


def as_service(d: Deployment, *, source: str) -> dict[str, str]:
    """The condition keys an AWS service sends when it acts for one of our resources."""
    return {**TLS, "aws:SourceArn": d.arn(source), "aws:SourceAccount": ACCOUNT}


def service_calls(
    d: Deployment, service: Service, actions: tuple[str, ...], target: str, *, source: str
) -> list[Request]:
    """`actions` on `target` by `service`, as its service principal acting for `source`."""
    return calls(service, actions, d.arn(target), as_service(d, source=source))


def calls(
    principal: Service | Role,
    actions: tuple[str, ...],
    resource: str,
    context: dict[str, str] | None = None,
) -> list[Request]:
    return [Request(principal, action, resource, context or TLS) for action in actions]


# Edges the template wires ------------------------------------------------------------------


class Kind(StrEnum):
    BUCKET_NOTIFICATION = "S3 notification"
    EVENT_SOURCE_MAPPING = "event source mapping"
    INVOKE_PERMISSION = "Lambda permission"
    SUBSCRIPTION = "SNS subscription"
    SUBSCRIPTION_REDRIVE = "SNS subscription redrive"
    DESTINATION = "Lambda async destination"
    FUNCTION_DEAD_LETTER = "Lambda dead-letter queue"
    QUEUE_REDRIVE = "SQS redrive"
    RULE_TARGET = "EventBridge target"
    RULE_DEAD_LETTER = "EventBridge target dead-letter queue"
    BUS_DEAD_LETTER = "EventBridge bus dead-letter queue"
    MAPPING_DESTINATION = "event source mapping on-failure destination"
    ALARM_ACTION = "alarm action"
    SCALING_POLICY = "scaling policy"
    SCALABLE_TARGET = "scalable target"
    ENDPOINT_NOTIFICATION = "SageMaker async notification"
    ENDPOINT_OUTPUT = "SageMaker async output"
    EXECUTION_ROLE = "execution role"


@dataclass(frozen=True, order=True)
class Edge:
    kind: Kind
    source: str  # logical id (or service principal, for a permission with no source)
    target: str

    def __str__(self) -> str:
        return f"{self.kind.value}: {self.source} -> {self.target}"


def referenced_id(value: Any) -> str:
    """The one resource a property value points at (Ref, GetAtt, or a Join around one)."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "Ref" in node and not str(node["Ref"]).startswith("AWS::"):
                found.append(node["Ref"])
            elif "Fn::GetAtt" in node:
                found.append(node["Fn::GetAtt"][0])
            else:
                for item in node.values():
                    walk(item)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(value)
    assert len(set(found)) == 1, f"{value} points at {found}"
    return found[0]


Props = dict[str, Any]
Wiring = Callable[[str, Props, Deployment], Iterator[Edge]]


def _edge(kind: Kind, source: str, target: Any) -> Edge:
    return Edge(kind, source, referenced_id(target))


def _bucket(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    for destination in _notification_destinations(props.get("NotificationConfiguration")):
        yield _edge(Kind.BUCKET_NOTIFICATION, logical_id, destination)


def _bucket_notifications(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    """CDK's custom resource for notifications added with add_event_notification."""
    bucket = referenced_id(props["BucketName"])
    for destination in _notification_destinations(props["NotificationConfiguration"]):
        yield _edge(Kind.BUCKET_NOTIFICATION, bucket, destination)


def _event_source_mapping(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    source = referenced_id(props["EventSourceArn"])
    yield _edge(Kind.EVENT_SOURCE_MAPPING, source, props["FunctionName"])
    for outcome in props.get("DestinationConfig", {}).values():  # OnFailure
        function = referenced_id(props["FunctionName"])
        yield _edge(Kind.MAPPING_DESTINATION, function, outcome["Destination"])


def _event_bus(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    if "DeadLetterConfig" in props:
        yield _edge(Kind.BUS_DEAD_LETTER, logical_id, props["DeadLetterConfig"]["Arn"])


def _permission(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    source = referenced_id(props["SourceArn"]) if "SourceArn" in props else props["Principal"]
    yield _edge(Kind.INVOKE_PERMISSION, source, props["FunctionName"])


def _subscription(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    topic = referenced_id(props["TopicArn"])
    yield _edge(Kind.SUBSCRIPTION, topic, props["Endpoint"])
    if "RedrivePolicy" in props:
        dead_letters = props["RedrivePolicy"]["deadLetterTargetArn"]
        yield _edge(Kind.SUBSCRIPTION_REDRIVE, topic, dead_letters)


def _event_invoke_config(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    function = referenced_id(props["FunctionName"])
    for outcome in props.get("DestinationConfig", {}).values():  # OnSuccess / OnFailure
        yield _edge(Kind.DESTINATION, function, outcome["Destination"])


def _function(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    yield _edge(Kind.EXECUTION_ROLE, logical_id, props["Role"])
    if "DeadLetterConfig" in props:
        yield _edge(Kind.FUNCTION_DEAD_LETTER, logical_id, props["DeadLetterConfig"]["TargetArn"])


def _queue(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    if "RedrivePolicy" in props:
        dead_letters = props["RedrivePolicy"]["deadLetterTargetArn"]
        yield _edge(Kind.QUEUE_REDRIVE, logical_id, dead_letters)


def _rule(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    for target in props.get("Targets", []):
        yield _edge(Kind.RULE_TARGET, logical_id, target["Arn"])
        if "DeadLetterConfig" in target:
            yield _edge(Kind.RULE_DEAD_LETTER, logical_id, target["DeadLetterConfig"]["Arn"])


def _alarm(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    for key in ("AlarmActions", "OKActions", "InsufficientDataActions"):
        for action in props.get(key, []):
            yield _edge(Kind.ALARM_ACTION, logical_id, action)


def _scaling_policy(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    yield _edge(Kind.SCALING_POLICY, logical_id, props["ScalingTargetId"])


def _scalable_target(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    """The target names its endpoint in ResourceId (endpoint/<name>/variant/<variant>)."""
    endpoint_name = props["ResourceId"].split("/")[1]
    (endpoint,) = [
        endpoint_id
        for endpoint_id, endpoint in d.synth.of_type("AWS::SageMaker::Endpoint").items()
        if endpoint["Properties"]["EndpointName"] == endpoint_name
    ]
    yield Edge(Kind.SCALABLE_TARGET, logical_id, endpoint)


def _endpoint_config(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    output = props.get("AsyncInferenceConfig", {}).get("OutputConfig", {})
    for topic in ("SuccessTopic", "ErrorTopic"):
        if topic in output.get("NotificationConfig", {}):
            yield _edge(Kind.ENDPOINT_NOTIFICATION, logical_id, output["NotificationConfig"][topic])
    for path in ("S3OutputPath", "S3FailurePath"):
        if path in output:
            yield _edge(Kind.ENDPOINT_OUTPUT, logical_id, output[path])


def _model(logical_id: str, props: Props, d: Deployment) -> Iterator[Edge]:
    yield _edge(Kind.EXECUTION_ROLE, logical_id, props["ExecutionRoleArn"])


# Where a template wires one resource to another, by resource type.
WIRING: Final[dict[str, Wiring]] = {
    "AWS::S3::Bucket": _bucket,
    "Custom::S3BucketNotifications": _bucket_notifications,
    "AWS::Lambda::EventSourceMapping": _event_source_mapping,
    "AWS::Lambda::Permission": _permission,
    "AWS::SNS::Subscription": _subscription,
    "AWS::Lambda::EventInvokeConfig": _event_invoke_config,
    "AWS::Lambda::Function": _function,
    "AWS::SQS::Queue": _queue,
    "AWS::Events::Rule": _rule,
    "AWS::Events::EventBus": _event_bus,
    "AWS::CloudWatch::Alarm": _alarm,
    "AWS::ApplicationAutoScaling::ScalingPolicy": _scaling_policy,
    "AWS::ApplicationAutoScaling::ScalableTarget": _scalable_target,
    "AWS::SageMaker::EndpointConfig": _endpoint_config,
    "AWS::SageMaker::Model": _model,
}


def template_edges(d: Deployment) -> set[Edge]:
    """Every edge the template wires between two resources (or a service and a resource)."""
    return {
        edge
        for logical_id, resource in d.synth.resources.items()
        if resource["Type"] in WIRING
        for edge in WIRING[resource["Type"]](logical_id, resource.get("Properties", {}), d)
    }


def _notification_destinations(configuration: dict[str, Any] | None) -> Iterator[Any]:
    for key, destination in (
        ("QueueConfigurations", "Queue"),  # AWS::S3::Bucket
        ("TopicConfigurations", "Topic"),
        ("LambdaConfigurations", "Function"),
        ("QueueConfigurations", "QueueArn"),  # Custom::S3BucketNotifications
        ("TopicConfigurations", "TopicArn"),
        ("LambdaFunctionConfigurations", "LambdaFunctionArn"),
    ):
        for entry in (configuration or {}).get(key, []):
            if destination in entry:
                yield entry[destination]


# The edge table ----------------------------------------------------------------------------

Column = Callable[[Deployment], list[Request]] | str  # the calls to prove, or why none apply


@dataclass(frozen=True)
class Row:
    edge: str
    covers: Callable[[Deployment], list[Edge]]  # the template edges this row accounts for
    identity: Column
    resource: Column
    key: Column
    facts: Callable[[Deployment], None] = field(default=lambda d: None)
    vl_only: bool = False

    def columns(self) -> Iterator[tuple[Via, Column]]:
        yield Via.IDENTITY, self.identity
        yield Via.RESOURCE, self.resource
        yield Via.KEY, self.key


NO_KEY_DATA = "n/a: nothing the call carries is stored under the stack key"
SERVICE_HAS_NO_IDENTITY = (
    "n/a: the service acts as its service principal, which has no identity policy"
)
SAME_ACCOUNT_ROLE = (
    "n/a: a role of the resource's own account, allowed by its identity policy; the resource "
    "policy only denies non-TLS requests (evaluated with each identity call)"
)


def _topic_to_function(topic: Topic, function: Function) -> Row:
    return Row(
        edge=f"SNS {topic.value} -> {function.value} (delivery)",
        covers=lambda d: [
            Edge(Kind.SUBSCRIPTION, d.topic(topic), d.function(function)),
            Edge(Kind.INVOKE_PERMISSION, d.topic(topic), d.function(function)),
        ],
        identity=SERVICE_HAS_NO_IDENTITY,
        resource=lambda d: service_calls(
            d, SNS, ("lambda:InvokeFunction",), d.function(function), source=d.topic(topic)
        ),
        key="n/a: a Lambda subscriber needs no key permission; SNS decrypts the message it stored",
        vl_only=topic is not Topic.ERROR,
    )


def _service_dead_letters(
    edge: str,
    kind: Kind,
    service: Service,
    source: Callable[[Deployment], str],
    *,
    facts: Callable[[Deployment], None] = lambda d: None,
    vl_only: bool = False,
) -> Row:
    """`service` sends what it could not deliver for `source` into the async failure queue, as
    its service principal, encrypting with the stack key."""
    return Row(
        edge=edge,
        covers=lambda d: [Edge(kind, source(d), d.async_failures)],
        identity=SERVICE_HAS_NO_IDENTITY,
        resource=lambda d: service_calls(
            d, service, ("sqs:SendMessage",), d.async_failures, source=source(d)
        ),
        key=lambda d: calls(service, ENCRYPT, d.key, as_service(d, source=source(d))),
        facts=facts,
        vl_only=vl_only,
    )


def _topic_redrive(topic: Topic) -> Row:
    return _service_dead_letters(
        f"SNS {topic.value} subscription -> async failure queue (redrive)",
        Kind.SUBSCRIPTION_REDRIVE,
        SNS,
        lambda d: d.topic(topic),
        vl_only=topic is not Topic.ERROR,
    )


def _function_dead_letters(function: Function) -> Row:
    return Row(
        edge=f"{function.value} async failures -> async failure queue (function DLQ)",
        covers=lambda d: [Edge(Kind.FUNCTION_DEAD_LETTER, d.function(function), d.async_failures)],
        identity=lambda d: calls(d.role(function), ("sqs:SendMessage",), d.arn(d.async_failures)),
        resource=SAME_ACCOUNT_ROLE,
        key=lambda d: calls(d.role(function), ENCRYPT, d.key),
        vl_only=function is Function.SCALE_IN,
    )


def _invokes_the_processor(edge: str, caller: Function, *, vl_only: bool = False) -> Row:
    return Row(
        edge=edge,
        covers=lambda d: [],
        identity=lambda d: calls(
            d.role(caller), ("lambda:InvokeFunction",), d.arn(d.function(Function.PROCESSOR))
        ),
        resource="n/a: same-account role; the function's policy holds no statement for it",
        key=NO_KEY_DATA,
        vl_only=vl_only,
    )


def _reads_vl_outcomes(edge: str, function: Function, prefix: str) -> Row:
    """GetObject on the endpoint's output or failure objects, and ListBucket on their prefix:
    without it a missing object reads 403 (retried as a denial), not 404 (missing)."""
    return Row(
        edge=edge,
        covers=lambda d: [],
        identity=lambda d: [
            *calls(d.role(function), ("s3:GetObject",), d.object_arn("Results", f"{prefix}j.out")),
            *calls(
                d.role(function),
                ("s3:ListBucket",),
                d.arn(d.bucket("Results")),
                {**TLS, "s3:prefix": f"{prefix}j.out"},
            ),
        ],
        resource=SAME_ACCOUNT_ROLE,
        key=lambda d: calls(d.role(function), DECRYPT, d.key),
        vl_only=True,
    )


def _scales_the_endpoint(
    edge: str, function: Function, *, facts: Callable[[Deployment], None] = lambda d: None
) -> Row:
    """Scaling the VL endpoint (out from zero, or in to zero) re-arms the scale-in alarm too."""
    return Row(
        edge=edge,
        covers=lambda d: [],
        identity=lambda d: [
            *calls(d.role(function), SCALE, d.arn(d.endpoint)),
            *calls(d.role(function), ("cloudwatch:SetAlarmState",), d.arn(d.scale_in_alarm)),
        ],
        resource="n/a: SageMaker endpoints and CloudWatch alarms have no resource policy",
        key=NO_KEY_DATA,
        facts=facts,
        vl_only=True,
    )


def _sagemaker_publishes(topic: Topic) -> Row:
    return Row(
        edge=f"SageMaker async endpoint -> {topic.value} (notification)",
        covers=lambda d: [Edge(Kind.ENDPOINT_NOTIFICATION, d.endpoint_config, d.topic(topic))],
        identity=lambda d: calls(d.execution_role, ("sns:Publish",), d.arn(d.topic(topic))),
        resource=(
            "n/a: SageMaker publishes with the endpoint's execution role, a role of the topic's "
            "account; the topic policy (TLS Deny only) needs no Allow for it (module docstring)"
        ),
        key=lambda d: calls(d.execution_role, ENCRYPT, d.key),
        vl_only=True,
    )


def _scale_in_alarm_waits_for_the_topic_policy(d: Deployment) -> None:
    policy = d.id(f"{Topic.SCALE_IN.value}/{Topic.SCALE_IN.value}/Policy")
    depends_on = as_list(d.synth.resources[d.scale_in_alarm].get("DependsOn", []))
    assert policy in depends_on, "the alarm's first notification could precede its Allow"
    actions = d.synth.props(d.scale_in_alarm)["AlarmActions"]
    assert actions == [ref(d.topic(Topic.SCALE_IN))]


def _invoker_knows_the_scale_in_alarm(d: Deployment) -> None:
    env = d.synth.props(d.function(Function.INVOKER))["Environment"]["Variables"]
    alarm_name = d.synth.props(d.scale_in_alarm)["AlarmName"]
    assert d.resolve(env[Env.VL_SCALE_IN_ALARM_NAME]) == alarm_name


def _step_scaling_reaches_the_variant(d: Deployment) -> None:
    (policy_id, policy), (target_id, target) = (
        d.synth.only("AWS::ApplicationAutoScaling::ScalingPolicy"),
        d.synth.only("AWS::ApplicationAutoScaling::ScalableTarget"),
    )
    assert d.synth.props(d.scale_out_alarm)["AlarmActions"] == [ref(policy_id)]
    assert policy["ScalingTargetId"] == ref(target_id)
    endpoint_name = d.synth.props(d.endpoint)["EndpointName"]
    assert target["ResourceId"] == f"endpoint/{endpoint_name}/variant/{names.VL_VARIANT_NAME}"
    assert target["ScalableDimension"] == SCALABLE_DIMENSION
    role = d.resolve(target["RoleARN"])
    assert role.startswith(f"arn:{PARTITION}:iam::{ACCOUNT}:role/aws-service-role/")
    assert role.endswith(f"/{SCALING_SERVICE_LINKED_ROLE}")


def _job_queue_redrives_within_the_key(d: Deployment) -> None:
    source, dead_letters = d.synth.props(d.job_queue), d.synth.props(d.job_dead_letter_queue)
    assert source["KmsMasterKeyId"] == dead_letters["KmsMasterKeyId"]
    # No RedriveAllowPolicy: any queue of the account may use it as its dead-letter queue.
    assert "RedriveAllowPolicy" not in dead_letters


def _sweeper_dead_letters_scoped_to_its_rule(d: Deployment) -> None:
    (statement,) = [
        s
        for policy in d.policies.resource_policies(d.arn(d.async_failures))
        for s in policy.document["Statement"]
        if s.get("Principal") == {"Service": EVENTS.name}
        and s["Condition"]["ArnEquals"]["aws:SourceArn"] != d.arn(d.event_bus)
    ]
    assert statement["Condition"] == {"ArnEquals": {"aws:SourceArn": d.arn(d.sweeper_rule)}}


EDGES: Final[tuple[Row, ...]] = (
    Row(
        edge="S3 input bucket -> job queue (object-created events)",
        covers=lambda d: [Edge(Kind.BUCKET_NOTIFICATION, d.bucket("Input"), d.job_queue)],
        identity=SERVICE_HAS_NO_IDENTITY,
        resource=lambda d: service_calls(
            d, S3, ("sqs:SendMessage",), d.job_queue, source=d.bucket("Input")
        ),
        key=lambda d: calls(S3, ENCRYPT, d.key, as_service(d, source=d.bucket("Input"))),
    ),
    Row(
        edge="Job queue -> invoker (event source mapping)",
        covers=lambda d: [
            Edge(Kind.EVENT_SOURCE_MAPPING, d.job_queue, d.function(Function.INVOKER))
        ],
        identity=lambda d: calls(d.role(Function.INVOKER), CONSUME, d.arn(d.job_queue)),
        resource=SAME_ACCOUNT_ROLE,
        key=lambda d: calls(d.role(Function.INVOKER), DECRYPT, d.key),
    ),
    Row(
        edge="Job queue -> job dead-letter queue (SQS redrive)",
        covers=lambda d: [Edge(Kind.QUEUE_REDRIVE, d.job_queue, d.job_dead_letter_queue)],
        identity="n/a: SQS moves the message itself; no caller's policy is evaluated",
        resource="n/a: no RedriveAllowPolicy restricts the source queues (asserted)",
        key="n/a: SQS re-encrypts internally; both queues use the stack key (asserted)",
        facts=_job_queue_redrives_within_the_key,
    ),
    _invokes_the_processor("Invoker -> OCR processor (async invoke)", Function.INVOKER),
    _invokes_the_processor(
        "OCR processor -> OCR processor (async invoke of a long document's chunks)",
        Function.PROCESSOR,
    ),
    _invokes_the_processor(
        "Completion handler -> OCR processor (async invoke: finish a VL job from its output)",
        Function.COMPLETION,
        vl_only=True,
    ),
    Row(
        edge="OCR processor -> error topic (on-failure destination)",
        covers=lambda d: [
            Edge(Kind.DESTINATION, d.function(Function.PROCESSOR), d.topic(Topic.ERROR))
        ],
        identity=lambda d: calls(
            d.role(Function.PROCESSOR), ("sns:Publish",), d.arn(d.topic(Topic.ERROR))
        ),
        resource=SAME_ACCOUNT_ROLE + "; Lambda publishes destination records with the role",
        key=lambda d: calls(d.role(Function.PROCESSOR), ENCRYPT, d.key),
    ),
    _topic_to_function(Topic.ERROR, Function.COMPLETION),
    _topic_to_function(Topic.SUCCESS, Function.COMPLETION),
    _topic_to_function(Topic.SCALE_IN, Function.SCALE_IN),
    _topic_redrive(Topic.ERROR),
    _topic_redrive(Topic.SUCCESS),
    _topic_redrive(Topic.SCALE_IN),
    _function_dead_letters(Function.COMPLETION),
    _function_dead_letters(Function.SCALE_IN),
    _function_dead_letters(Function.SWEEPER),
    _function_dead_letters(Function.EVENTS),
    Row(
        edge="Status table stream -> events function (event source mapping, terminal records)",
        covers=lambda d: [
            Edge(Kind.EVENT_SOURCE_MAPPING, d.status_table, d.function(Function.EVENTS))
        ],
        identity=lambda d: [
            *calls(
                d.role(Function.EVENTS),
                ("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"),
                d.table_stream,
            ),
            *calls(d.role(Function.EVENTS), ("dynamodb:ListStreams",), "*"),
        ],
        resource="n/a: a stream has no resource policy; Lambda polls it with the function's role",
        key=lambda d: calls(d.role(Function.EVENTS), DECRYPT, d.key),
    ),
    Row(
        edge="Events function's stream mapping -> async failure queue (on-failure destination)",
        covers=lambda d: [
            Edge(Kind.MAPPING_DESTINATION, d.function(Function.EVENTS), d.async_failures)
        ],
        identity=lambda d: calls(
            d.role(Function.EVENTS), ("sqs:SendMessage",), d.arn(d.async_failures)
        ),
        resource=SAME_ACCOUNT_ROLE + "; Lambda sends the failed batch's description with the role",
        key=lambda d: calls(d.role(Function.EVENTS), ENCRYPT, d.key),
    ),
    Row(
        edge="Events function -> job event bus (PutEvents)",
        covers=lambda d: [],
        identity=lambda d: calls(
            d.role(Function.EVENTS), ("events:PutEvents",), d.arn(d.event_bus)
        ),
        resource="n/a: the bus has no resource policy; a same-account role's PutEvents is "
        "allowed by its identity policy",
        # EventBridge encrypts the event with the stack key as its service principal, for this
        # bus (CDK's key-policy statement names the bus in aws:SourceArn and the context).
        key=lambda d: calls(
            EVENTS,
            ENCRYPT,
            d.key,
            {
                **as_service(d, source=d.event_bus),
                "kms:EncryptionContext:aws:events:event-bus:arn": d.arn(d.event_bus),
            },
        ),
    ),
    _service_dead_letters(
        "Job event bus -> async failure queue (events it cannot encrypt or decrypt)",
        Kind.BUS_DEAD_LETTER,
        EVENTS,
        lambda d: d.event_bus,
    ),
    _reads_vl_outcomes(
        "Completion handler -> results bucket (reads VL failure objects; 404 when missing)",
        Function.COMPLETION,
        names.VL_FAILURE_PREFIX,
    ),
    _reads_vl_outcomes(
        "OCR processor -> results bucket (reads VL outputs; 404 when missing)",
        Function.PROCESSOR,
        names.VL_OUTPUT_PREFIX,
    ),
    Row(
        edge="EventBridge schedule -> stale-job sweeper",
        covers=lambda d: [
            Edge(Kind.RULE_TARGET, d.sweeper_rule, d.function(Function.SWEEPER)),
            Edge(Kind.INVOKE_PERMISSION, d.sweeper_rule, d.function(Function.SWEEPER)),
        ],
        identity=SERVICE_HAS_NO_IDENTITY,
        resource=lambda d: service_calls(
            d,
            EVENTS,
            ("lambda:InvokeFunction",),
            d.function(Function.SWEEPER),
            source=d.sweeper_rule,
        ),
        key=NO_KEY_DATA,
    ),
    _service_dead_letters(
        "EventBridge schedule -> async failure queue (target dead-letter queue)",
        Kind.RULE_DEAD_LETTER,
        EVENTS,
        lambda d: d.sweeper_rule,
        facts=_sweeper_dead_letters_scoped_to_its_rule,
    ),
    Row(
        edge="Lambda -> each function's execution role (sts:AssumeRole)",
        covers=lambda d: [
            Edge(Kind.EXECUTION_ROLE, d.function(f), d.role(f).logical_id)
            for f in Function
            if d.has(f)
        ],
        identity=SERVICE_HAS_NO_IDENTITY,
        resource=lambda d: [
            request
            for f in Function
            if d.has(f)
            for request in calls(LAMBDA, ("sts:AssumeRole",), d.role(f).arn)
        ],
        key=NO_KEY_DATA,
    ),
    # The GPU path.
    Row(
        edge="SageMaker -> endpoint execution role (sts:AssumeRole)",
        covers=lambda d: [
            Edge(
                Kind.EXECUTION_ROLE,
                d.synth.only("AWS::SageMaker::Model")[0],
                d.execution_role.logical_id,
            )
        ],
        identity=SERVICE_HAS_NO_IDENTITY,
        resource=lambda d: calls(SAGEMAKER, ("sts:AssumeRole",), d.execution_role.arn),
        key=NO_KEY_DATA,
        vl_only=True,
    ),
    _scales_the_endpoint(
        "Invoker -> VL endpoint and scale-in alarm (scale out 0->1, re-arm)",
        Function.INVOKER,
        facts=_invoker_knows_the_scale_in_alarm,
    ),
    Row(
        edge="OCR processor -> VL endpoint (manifest, InvokeEndpointAsync per document or chunk)",
        covers=lambda d: [],
        identity=lambda d: [
            *calls(
                d.role(Function.PROCESSOR), ("sagemaker:InvokeEndpointAsync",), d.arn(d.endpoint)
            ),
            *calls(
                d.role(Function.PROCESSOR),
                ("s3:PutObject",),
                d.object_arn("Results", f"{names.VL_MANIFEST_PREFIX}job-1/chunk-00003.json"),
            ),
        ],
        resource="n/a: SageMaker endpoints have no resource policy; the bucket policy only "
        "denies non-TLS requests",
        key=lambda d: calls(d.role(Function.PROCESSOR), ENCRYPT, d.key),
        vl_only=True,
    ),
    Row(
        edge="Completion handler -> a chunked VL job's plan (reads which pages a chunk holds)",
        covers=lambda d: [],
        identity=lambda d: calls(
            d.role(Function.COMPLETION),
            ("s3:GetObject",),
            d.object_arn("Results", f"{names.WORK_PREFIX}job-1/{names.WORK_PLAN}"),
        ),
        resource=SAME_ACCOUNT_ROLE,
        key=lambda d: calls(d.role(Function.COMPLETION), DECRYPT, d.key),
        vl_only=True,
    ),
    Row(
        edge="SageMaker container -> input, manifests, chunk PDFs and model cache (reads)",
        covers=lambda d: [],
        identity=lambda d: [
            *calls(d.execution_role, ("s3:GetObject",), d.object_arn("Input", "input/a.pdf")),
            *calls(
                d.execution_role,
                ("s3:GetObject",),
                d.object_arn("Results", f"{names.VL_MANIFEST_PREFIX}job-1.json"),
            ),
            *calls(
                d.execution_role,
                ("s3:GetObject",),
                d.object_arn("Results", f"{names.WORK_PREFIX}job-1/chunks/00003.pdf"),
            ),
            *calls(
                d.execution_role,
                ("s3:GetObject",),
                d.object_arn("ModelCache", f"{names.MODEL_CACHE_PREFIX}m.tar.gz"),
            ),
        ],
        resource=SAME_ACCOUNT_ROLE,
        key=lambda d: calls(d.execution_role, DECRYPT, d.key),
        vl_only=True,
    ),
    Row(
        edge="SageMaker async endpoint -> results bucket (output and failure objects)",
        covers=lambda d: [Edge(Kind.ENDPOINT_OUTPUT, d.endpoint_config, d.bucket("Results"))],
        identity=lambda d: [
            request
            for prefix in (names.VL_OUTPUT_PREFIX, names.VL_FAILURE_PREFIX)
            for request in calls(
                d.execution_role, ("s3:PutObject",), d.object_arn("Results", f"{prefix}job-1.out")
            )
        ],
        resource=SAME_ACCOUNT_ROLE,
        key=lambda d: calls(d.execution_role, ENCRYPT, d.key),
        vl_only=True,
    ),
    _sagemaker_publishes(Topic.SUCCESS),
    _sagemaker_publishes(Topic.ERROR),
    Row(
        edge="CloudWatch scale-in alarm -> scale-in topic",
        covers=lambda d: [Edge(Kind.ALARM_ACTION, d.scale_in_alarm, d.topic(Topic.SCALE_IN))],
        identity=SERVICE_HAS_NO_IDENTITY,
        resource=lambda d: service_calls(
            d, CLOUDWATCH, ("sns:Publish",), d.topic(Topic.SCALE_IN), source=d.scale_in_alarm
        ),
        key=lambda d: calls(CLOUDWATCH, ENCRYPT, d.key, as_service(d, source=d.scale_in_alarm)),
        facts=_scale_in_alarm_waits_for_the_topic_policy,
        vl_only=True,
    ),
    _scales_the_endpoint(
        "Scale-in handler -> VL endpoint and scale-in alarm (scale to 0, re-arm)",
        Function.SCALE_IN,
    ),
    Row(
        edge="Backlog alarm -> step scaling policy -> endpoint variant (Application Auto Scaling)",
        covers=lambda d: [
            Edge(
                Kind.ALARM_ACTION,
                d.scale_out_alarm,
                d.synth.only("AWS::ApplicationAutoScaling::ScalingPolicy")[0],
            ),
            Edge(
                Kind.SCALING_POLICY,
                d.synth.only("AWS::ApplicationAutoScaling::ScalingPolicy")[0],
                d.synth.only("AWS::ApplicationAutoScaling::ScalableTarget")[0],
            ),
            Edge(
                Kind.SCALABLE_TARGET,
                d.synth.only("AWS::ApplicationAutoScaling::ScalableTarget")[0],
                d.endpoint,
            ),
        ],
        identity=(
            "n/a: Application Auto Scaling acts through its service-linked role, whose policy "
            "AWS manages; the scalable target names that role (asserted)"
        ),
        resource="n/a: an alarm action on a scaling policy, and the endpoint, take no "
        "resource policy",
        key=NO_KEY_DATA,
        facts=_step_scaling_reaches_the_variant,
        vl_only=True,
    ),
)


# Tests -------------------------------------------------------------------------------------


_DEPLOYMENTS: dict[int, Deployment] = {}


def _deployment(synth: Synthesized) -> Deployment:
    """One Deployment (resolved policies) per synthesized stack of the session."""
    if id(synth) not in _DEPLOYMENTS:
        _DEPLOYMENTS[id(synth)] = Deployment(synth)
    return _DEPLOYMENTS[id(synth)]


@pytest.fixture(params=SYNTHS)
def deployment(request: pytest.FixtureRequest) -> Deployment:
    return _deployment(request.getfixturevalue(request.param))


def _applies(row: Row, d: Deployment) -> bool:
    return not row.vl_only or bool(d.synth.of_type("AWS::SageMaker::Endpoint"))


# GPU-path rows are checked on the full stack only: a CPU-only stack has no such edge (and the
# completeness test below fails a row whose edge is missing where it should exist).
_CASES: Final = [
    pytest.param(row, synth_name, id=f"{row.edge}-{synth_name}")
    for row in EDGES
    for synth_name in SYNTHS
    if synth_name == "full" or not row.vl_only
]


@pytest.mark.parametrize(("row", "synth_name"), _CASES)
def test_edge_is_allowed_by_the_policies_that_govern_it(
    row: Row, synth_name: str, request: pytest.FixtureRequest
) -> None:
    # GIVEN the synthesized stack's policies
    d = _deployment(request.getfixturevalue(synth_name))
    assert _applies(row, d), f"{row.edge}: the {synth_name} stack should deploy this edge"

    # WHEN each call of the edge is evaluated against the policy that must grant it
    failures = []
    for via, column in row.columns():
        if isinstance(column, str):
            assert column.startswith("n/a: "), f"{row.edge} [{via}]: say why it does not apply"
            continue
        requests = column(d)
        assert requests, f"{row.edge} [{via}]: no calls to check"
        for call in requests:
            decision = d.policies.authorize(call, via=via)
            if not decision.allowed:
                failures.append(f"{row.edge} [{via.value}]: {decision.explain()}")

    # THEN every call is allowed, and the edge's structural facts hold
    assert not failures, "\n".join(failures)
    row.facts(d)


def test_every_edge_of_the_template_has_a_row(deployment: Deployment) -> None:
    # GIVEN the edges the template wires
    wired = template_edges(deployment)
    assert wired

    # WHEN the rows that apply to this deployment account for theirs
    covered: set[Edge] = set()
    for row in EDGES:
        if _applies(row, deployment):
            covered.update(row.covers(deployment))

    # THEN no wired edge lacks a row, and no row claims an edge that is not wired
    assert sorted(map(str, wired - covered)) == []
    assert sorted(map(str, covered - wired)) == []


# The evaluator has teeth: what no policy grants is refused. --------------------------------


def test_a_service_acting_for_another_resource_is_refused(full: Synthesized) -> None:
    d = _deployment(full)
    elsewhere = {**TLS, "aws:SourceAccount": "444455556666"}
    foreign = [
        Request(
            CLOUDWATCH,
            "sns:Publish",
            d.arn(d.topic(Topic.SCALE_IN)),
            {
                **TLS,
                "aws:SourceArn": d.arn(d.scale_in_alarm) + "-other",
                "aws:SourceAccount": ACCOUNT,
            },
        ),
        Request(
            EVENTS,
            "sqs:SendMessage",
            d.arn(d.async_failures),
            {
                **TLS,
                "aws:SourceArn": d.arn(d.sweeper_rule) + "-other",
                "aws:SourceAccount": ACCOUNT,
            },
        ),
        Request(
            SNS,
            "lambda:InvokeFunction",
            d.arn(d.function(Function.COMPLETION)),
            {**TLS, "aws:SourceArn": d.arn(d.topic(Topic.SCALE_IN)), "aws:SourceAccount": ACCOUNT},
        ),
        Request(
            S3,
            "sqs:SendMessage",
            d.arn(d.job_queue),
            {**elsewhere, "aws:SourceArn": "arn:aws:s3:::x"},
        ),
        Request(EVENTS, "kms:GenerateDataKey", d.key, elsewhere),
        # The key names each service's source resources, not just the account: another bucket,
        # topic or rule of this account may not use it.
        *(
            Request(
                service,
                action,
                resource,
                {**TLS, "aws:SourceArn": arn, "aws:SourceAccount": ACCOUNT},
            )
            for service, arn in (
                (S3, "arn:aws:s3:::another-bucket-of-this-account"),
                (SNS, f"arn:aws:sns:us-east-1:{ACCOUNT}:another-topic"),
                (EVENTS, f"arn:aws:events:us-east-1:{ACCOUNT}:rule/another-rule"),
                (CLOUDWATCH, f"arn:aws:cloudwatch:us-east-1:{ACCOUNT}:alarm:another-alarm"),
            )
            for action, resource in (
                ("kms:GenerateDataKey", d.key),
                ("sqs:SendMessage", d.arn(d.job_queue)),
            )
        ),
        # A service that sends no source keys at all matches no scoped statement.
        Request(CLOUDWATCH, "sns:Publish", d.arn(d.topic(Topic.SCALE_IN)), TLS),
    ]
    for call in foreign:
        assert not d.policies.authorize(call, via=Via.RESOURCE).allowed, call


def test_a_topic_policy_with_only_the_tls_deny_refuses_services(full: Synthesized) -> None:
    # CloudWatch may publish to the scale-in topic only; the error topic's policy names no one.
    d = _deployment(full)
    call = Request(
        CLOUDWATCH,
        "sns:Publish",
        d.arn(d.topic(Topic.ERROR)),
        as_service(d, source=d.scale_in_alarm),
    )
    decision = d.policies.authorize(call, via=Via.RESOURCE)
    assert not decision.allowed
    assert "no Allow in the resource policy grants it" in decision.explain()


def test_requests_without_tls_are_denied_even_to_granted_roles(full: Synthesized) -> None:
    d = _deployment(full)
    call = Request(
        d.role(Function.PROCESSOR),
        "sns:Publish",
        d.arn(d.topic(Topic.ERROR)),
        {"aws:SecureTransport": "false"},
    )
    decision = d.policies.authorize(call, via=Via.IDENTITY)
    assert decision.denied_by
    assert not decision.allowed


def test_listing_the_results_bucket_is_limited_to_the_vl_outcomes(full: Synthesized) -> None:
    d = _deployment(full)
    call = Request(
        d.role(Function.COMPLETION),
        "s3:ListBucket",
        d.arn(d.bucket("Results")),
        {**TLS, "s3:prefix": f"{names.VL_MANIFEST_PREFIX}job-1.json"},
    )
    assert not d.policies.authorize(call, via=Via.IDENTITY).allowed


def test_a_role_reaches_the_key_only_with_its_own_grant(full: Synthesized) -> None:
    # The key policy delegates to the account's IAM policies: a granted role may use the key,
    # a role of the same account without a grant may not.
    d = _deployment(full)
    execution_role_decrypt = Request(d.execution_role, "kms:Decrypt", d.key, TLS)
    assert d.policies.authorize(execution_role_decrypt, via=Via.KEY).allowed
    stranger = Request(Role("NoSuchRole"), "kms:Decrypt", d.key, TLS)
    assert not d.policies.authorize(stranger, via=Via.KEY).allowed


# Log groups: encrypted with the data key, which CloudWatch Logs may use for them only. -------


@pytest.mark.parametrize("mode", ["full", "private"])
def test_cloudwatch_logs_may_use_the_key_for_this_stacks_log_groups_only(
    mode: str, request: pytest.FixtureRequest
) -> None:
    synth: Synthesized = request.getfixturevalue(mode)
    d = _deployment(synth)
    logs = Service(f"logs.{REGION}.amazonaws.com")
    log_group_arn = f"arn:{PARTITION}:logs:{REGION}:{ACCOUNT}:log-group:"
    groups = synth.of_type("AWS::Logs::LogGroup")
    assert len(groups) >= 7
    for logical_id, group in groups.items():
        props = group["Properties"]
        assert d.resolve(props["KmsKeyId"]) == d.key, logical_id
        # A group without a name gets CloudFormation's: <stack>-<logical id>-<random suffix>.
        generated = f"{synth.stack.stack_name}-{logical_id}-1A2B3C4D5E6F"
        name = d.resolve(props.get("LogGroupName", generated))
        context = {"kms:EncryptionContext:aws:logs:arn": log_group_arn + name}
        for action in ("kms:GenerateDataKey", "kms:Encrypt", "kms:Decrypt"):
            call = Request(logs, action, d.key, context)
            assert d.policies.authorize(call, via=Via.KEY).allowed, (logical_id, action)
    # ... and no other log group of the account.
    other = {"kms:EncryptionContext:aws:logs:arn": log_group_arn + "another-app"}
    assert not d.policies.authorize(Request(logs, "kms:Decrypt", d.key, other), via=Via.KEY).allowed
