"""The pipeline's EventBridge bus, where the events function puts one job-finished event per
job (idp.contract.events): encrypted with the stack's key, with a dead-letter queue for events
EventBridge cannot encrypt or decrypt, and an archive for replay."""

from __future__ import annotations

from aws_cdk import Duration, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from idp.contract.events import EVENT_SOURCE
from infra.encryption import DataKey
from infra.queues import allow_service_send

ARCHIVE_RETENTION_DAYS = 14


class JobEventBus(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        data_key: DataKey,
        dead_letter_queue: sqs.IQueue,
    ) -> None:
        super().__init__(scope, construct_id)
        self._data_key = data_key
        stack = Stack.of(self)
        bus_name = f"{stack.stack_name}-{construct_id}"
        self.bus = events.EventBus(
            self,
            "Bus",
            event_bus_name=bus_name,
            kms_key=data_key.key,
            dead_letter_queue=dead_letter_queue,
        )
        # EventBridge writes what it cannot encrypt or decrypt into the queue as its service
        # principal, for this bus only: the queue's policy and the key's name it (by the ARN
        # built from its name: the key's policy cannot reference what the key encrypts).
        bus_arn = stack.format_arn(service="events", resource="event-bus", resource_name=bus_name)
        data_key.allow_service("events.amazonaws.com", source_arns=[bus_arn])
        allow_service_send(
            dead_letter_queue,
            sid="AllowJobEventBusDeadLetters",
            service_principal="events.amazonaws.com",
            conditions={"ArnEquals": {"aws:SourceArn": self.bus.event_bus_arn}},
        )
        # Every job-finished event, kept for replay (a consumer that was down catches up).
        # Encrypted by EventBridge with its own key: CDK's key-policy statement for an archive
        # names the bus by its GetAtt, and the bus's dead-letter queue is under the stack key,
        # so the stack key would depend on itself (CloudFormation refuses the cycle).
        self.archive = events.Archive(
            self,
            "Archive",
            source_event_bus=self.bus,
            description="paddle-idp job-finished events, for replay",
            event_pattern=events.EventPattern(source=[EVENT_SOURCE]),
            retention=Duration.days(ARCHIVE_RETENTION_DAYS),
        )

    def grant_put_events(self, grantee: iam.IGrantable) -> None:
        """events:PutEvents on this bus only."""
        self.bus.grant_put_events_to(grantee)
