"""SQS queues: the job queue with its dead-letter queue, and the dead-letter queue for failed
asynchronous (SNS-triggered) Lambda invocations. All KMS-encrypted and TLS-only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.encryption import DataKey
from infra.nag import acknowledge

_DLQ_RETENTION = Duration.days(14)  # the SQS maximum: time to inspect and redrive


def _encrypted_queue(
    scope: Construct,
    construct_id: str,
    *,
    data_key: DataKey,
    retention_period: Duration = _DLQ_RETENTION,
    visibility_timeout: Duration | None = None,
    dead_letter_queue: sqs.DeadLetterQueue | None = None,
) -> sqs.Queue:
    return sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.KMS,
        encryption_master_key=data_key.key,
        data_key_reuse=Duration.hours(1),  # fewer KMS calls per message
        enforce_ssl=True,
        retention_period=retention_period,
        visibility_timeout=visibility_timeout,
        dead_letter_queue=dead_letter_queue,
    )


def allow_service_send(
    queue: sqs.IQueue, *, sid: str, service_principal: str, conditions: Mapping[str, Any]
) -> None:
    """Let an AWS service send into `queue` as its service principal, only where `conditions`
    hold (for the one resource it acts for), by a statement of the queue's resource policy."""
    queue.add_to_resource_policy(
        iam.PolicyStatement(
            sid=sid,
            principals=[iam.ServicePrincipal(service_principal)],
            actions=["sqs:SendMessage"],
            resources=[queue.queue_arn],
            conditions=conditions,
        )
    )


class JobQueue(Construct):
    """Job messages (S3 events and direct JSON jobs) for the invoker, and their DLQ.

    A message the invoker cannot handle `max_receive_count` times lands in the DLQ instead of
    looping; the visibility timeout covers several invoker timeouts so that a slow attempt is
    never redelivered while it still runs.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        data_key: DataKey,
        visibility_timeout: Duration,
        max_receive_count: int,
    ) -> None:
        super().__init__(scope, construct_id)
        self.dead_letter_queue = _encrypted_queue(self, "DeadLetterQueue", data_key=data_key)
        _acknowledge_is_dead_letter_queue(self.dead_letter_queue)
        self.queue = _encrypted_queue(
            self,
            "Queue",
            data_key=data_key,
            retention_period=Duration.days(4),
            visibility_timeout=visibility_timeout,
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letter_queue, max_receive_count=max_receive_count
            ),
        )


class AsyncFailureQueue(Construct):
    """Where SNS deliveries and async Lambda invocations end after their retries: the
    completion and scale-in handlers' dead letters, kept for inspection and redrive."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        data_key: DataKey,
        redriven_topic_arns: Sequence[str],
    ) -> None:
        super().__init__(scope, construct_id)
        self._data_key = data_key
        self.queue = _encrypted_queue(self, "Queue", data_key=data_key)
        _acknowledge_is_dead_letter_queue(self.queue)
        # SNS itself writes undeliverable notifications of these topics here (subscription
        # redrive policy).
        data_key.allow_service("sns.amazonaws.com", source_arns=redriven_topic_arns)

    def grant_dead_lettering(self, role: iam.IGrantable) -> None:
        """The key actions a function needs to write its failed events into this encrypted
        queue (CDK grants sqs:SendMessage itself when the queue is the function's DLQ)."""
        self._data_key.grant_encrypt_decrypt(role)


def _acknowledge_is_dead_letter_queue(queue: sqs.Queue) -> None:
    acknowledge(
        queue,
        "Serverless-SQSRedrivePolicy",
        "This queue is itself a dead-letter queue; its messages stay 14 days for inspection "
        "and redrive, a further dead-letter queue would add nothing.",
    )
