"""The scale-in handler: when the idle-backlog alarm fires, sets the VL variant's desired
instance count to 0 so an idle GPU instance stops costing money."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from idp.names import Env
from idp.topology import FunctionSpec
from infra.functions import ZipFunction


class ScaleInHandler(Construct):
    """Zip function subscribed to the scale-in alarm topic."""

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
        topic: sns.ITopic,
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
            description="Scales the idle VL endpoint in to zero instances",
        )
        self.function = handler.function
        self.role = handler.role
        self.log_group = handler.log_group
        topic.add_subscription(
            subscriptions.LambdaSubscription(self.function, dead_letter_queue=failure_queue)
        )
