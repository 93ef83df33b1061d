"""The stale-job sweeper: a scheduled function that ends jobs no worker can still be on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from idp.names import Env
from idp.topology import FunctionSpec
from infra.functions import ZipFunction


class JobSweeper(Construct):
    """Zip function run by an EventBridge schedule."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        spec: FunctionSpec,
        code: lambda_.Code,
        layers: Sequence[lambda_.ILayerVersion],
        environment: Mapping[Env, str],
        log_retention: logs.RetentionDays,
        every: Duration,
        failure_queue: sqs.IQueue,
    ) -> None:
        super().__init__(scope, construct_id)
        handler = ZipFunction(
            self,
            "Handler",
            spec=spec,
            code=code,
            layers=layers,
            environment=environment,
            log_retention=log_retention,
            dead_letter_queue=failure_queue,
            description="Ends jobs stuck in QUEUED or PROCESSING past every deadline",
        )
        self.function = handler.function
        self.role = handler.role
        self.log_group = handler.log_group
        self.rule = events.Rule(
            self,
            "Schedule",
            schedule=events.Schedule.rate(every),
            targets=[
                targets.LambdaFunction(
                    self.function, dead_letter_queue=failure_queue, retry_attempts=2
                )
            ],
        )
