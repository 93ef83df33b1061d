"""The completion handler: turns SageMaker async notifications (success and error topics) and
the processor's async-invoke failure records (error topic) into final job records."""

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


class CompletionHandler(Construct):
    """Zip function subscribed to each topic; undeliverable notifications and failed async
    invocations end in the async failure queue."""

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
        topics: Sequence[sns.ITopic],
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
            description="Records VL results and processor crashes as final job states",
        )
        self.function = handler.function
        self.role = handler.role
        self.log_group = handler.log_group
        for topic in topics:
            topic.add_subscription(
                subscriptions.LambdaSubscription(self.function, dead_letter_queue=failure_queue)
            )
