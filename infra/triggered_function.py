"""A zip function of the pipeline and what triggers it: the invoker, completion, scale-in and
stale-job sweeper functions are each one `TriggeredFunction` with its own trigger (its incoming
edge) and the calls it makes (its outgoing edges, infra/calls.py).

- `QueueTrigger`: an SQS event source with partial batch responses (the invoker);
- `TopicTrigger`: SNS subscriptions (the completion and scale-in handlers);
- `ScheduleTrigger`: an EventBridge schedule (the sweeper);
- `TableStreamTrigger`: the status table's stream, filtered to terminal records (the events
  function).

Async invocations that fail for good (SNS, EventBridge) end in `failure_queue`; a queue-fed
function has its queue's own dead-letter queue instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import jsii
from aws_cdk import Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from idp.contract.names import TERMINAL_STATUSES
from idp.contract.topology import FunctionSpec
from infra.functions import ZIP_RUNTIME, Call, FunctionRole, ZipBuild, function_environment
from infra.nag import acknowledge, acknowledge_python_runtime, acknowledge_untraced


class Trigger(Protocol):
    @property
    def failure_queue(self) -> sqs.IQueue | None: ...

    def attach(self, scope: Construct, function: lambda_.Function) -> None: ...


@dataclass(frozen=True)
class QueueTrigger:
    """SQS event source with partial batch responses: a failed message is retried alone (and
    reaches the queue's DLQ after its max receives), not its whole batch."""

    queue: sqs.IQueue
    batch_size: int
    failure_queue: sqs.IQueue | None = None  # invoked synchronously: the queue's DLQ applies

    def attach(self, scope: Construct, function: lambda_.Function) -> None:
        function.add_event_source(
            event_sources.SqsEventSource(
                self.queue, batch_size=self.batch_size, report_batch_item_failures=True
            )
        )
        acknowledge(
            function,
            "Serverless-LambdaDLQ",
            "Invoked synchronously by its SQS event source: failed messages go to the job "
            "queue's own dead-letter queue; a function DLQ only applies to async invocations.",
        )
        acknowledge(
            function,
            "Serverless-LambdaEventSourceMappingDestination",
            "SQS event source mappings take no on-failure destination; the job queue's redrive "
            "policy moves a message to the DLQ after its maximum receives.",
        )


@dataclass(frozen=True)
class TopicTrigger:
    """A subscription to each topic; undeliverable notifications go to the failure queue."""

    topics: Sequence[sns.ITopic]
    failure_queue: sqs.IQueue

    def attach(self, scope: Construct, function: lambda_.Function) -> None:
        for topic in self.topics:
            topic.add_subscription(
                subscriptions.LambdaSubscription(function, dead_letter_queue=self.failure_queue)
            )


@dataclass(frozen=True)
class ScheduleTrigger:
    """An EventBridge rule running the function every `every`; events it cannot deliver go
    to the failure queue after 2 retries."""

    every: Duration
    failure_queue: sqs.IQueue
    rule_name: str  # named, so that the key's policy can name it without a reference

    def attach(self, scope: Construct, function: lambda_.Function) -> None:
        events.Rule(
            scope,
            "Schedule",
            rule_name=self.rule_name,
            schedule=events.Schedule.rate(self.every),
            targets=[
                targets.LambdaFunction(
                    function, dead_letter_queue=self.failure_queue, retry_attempts=2
                )
            ],
        )


@dataclass(frozen=True)
class TableStreamTrigger:
    """The status table's stream, from its oldest record. Only records whose new image is
    COMPLETED or FAILED reach the function (a filter of the event source mapping; the function
    keeps the one that ended the job). A record that keeps failing is retried alone (partial
    batch responses, bisection), then its batch's description goes to the failure queue."""

    table: dynamodb.ITable
    failure_queue: sqs.IQueue
    batch_size: int
    retry_attempts: int

    def attach(self, scope: Construct, function: lambda_.Function) -> None:
        function.add_event_source(
            event_sources.DynamoEventSource(
                self.table,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=self.batch_size,
                bisect_batch_on_error=True,
                retry_attempts=self.retry_attempts,
                report_batch_item_failures=True,
                on_failure=_SendsToQueue(self.failure_queue),
                filters=[
                    lambda_.FilterCriteria.filter(
                        {"dynamodb": {"NewImage": {"status": {"S": list(TERMINAL_STATUSES)}}}}
                    )
                ],
            )
        )


@jsii.implements(lambda_.IEventSourceDlq)
class _SendsToQueue:
    """An event source mapping's on-failure destination granted sqs:SendMessage alone (CDK's
    SqsDlq also grants wildcard KMS actions; the function's key grant is exact)."""

    def __init__(self, queue: sqs.IQueue) -> None:
        self._queue = queue

    def bind(
        self, target: lambda_.IEventSourceMapping, target_handler: lambda_.IFunction
    ) -> lambda_.DlqDestinationConfig:
        target_handler.add_to_role_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[self._queue.queue_arn])
        )
        return lambda_.DlqDestinationConfig(destination=self._queue.queue_arn)


class TriggeredFunction(Construct):
    """A Python zip function built from its topology spec, and its trigger."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        spec: FunctionSpec,
        build: ZipBuild,
        description: str,
        trigger: Trigger,
        calls: Sequence[Call] = (),
    ) -> None:
        super().__init__(scope, construct_id)
        # "Handler" stays in the construct path: the deployed resources' logical ids derive from it.
        handler = Construct(self, "Handler")
        access = FunctionRole(handler, "Access", log_policy=build.log_policy)
        self.role = access.role
        self.log_group = access.log_group
        self.function = lambda_.Function(
            handler,
            "Function",
            description=description,
            runtime=ZIP_RUNTIME,
            handler=spec.handler,
            code=build.code,
            layers=list(build.layers),
            environment=function_environment(spec, build.environment, calls),
            dead_letter_queue=trigger.failure_queue,
            **access.function_props(spec, build.network),
        )
        acknowledge_untraced(self.function)
        acknowledge_python_runtime(self.function)
        trigger.attach(self, self.function)
        for call in calls:
            call.grant(self.role)
