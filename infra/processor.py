"""The OCR processor: a container-image Lambda running PP-OCRv5 / PP-StructureV3 on CPU,
invoked asynchronously by the invoker, one job per invocation; a long document's page chunks are
invocations of their own, which the processor starts itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import jsii
from aws_cdk import Duration, Size
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from constructs import Construct

from idp.contract.env.functions import Env
from idp.contract.topology import FunctionSpec
from infra.functions import Call, FunctionRole, function_environment, grant_invoke, image_code
from infra.log_groups import LogPolicy
from infra.nag import acknowledge, acknowledge_untraced
from infra.network import PrivateNetwork

DOCKERFILE: Final = "ocr_processor_image/Dockerfile"
# Only /tmp is writable on Lambda: PaddleX and anything using ~ must write there.
_WRITABLE_HOME: Final = {"HOME": "/tmp", "PADDLE_PDX_CACHE_HOME": "/tmp/paddlex"}  # noqa: S108


class OcrProcessor(Construct):
    """DockerImageFunction built from ocr_processor_image/ (build context: the repo root).

    Asynchronous invocations retry `retry_attempts` times, then go to `on_failure_topic` as a
    Lambda destination record, so a crash or a timeout still ends the job FAILED. Ephemeral
    storage holds the model cache between warm invocations.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        spec: FunctionSpec,
        repo_root: Path,
        environment: Mapping[Env, str],
        log_policy: LogPolicy,
        ephemeral_storage_mib: int,
        reserved_concurrency: int | None,
        retry_attempts: int,
        max_event_age: Duration,
        on_failure_topic: sns.ITopic,
        calls: Sequence[Call] = (),
        network: PrivateNetwork | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        access = FunctionRole(self, "Access", log_policy=log_policy)
        self.role = access.role
        self.log_group = access.log_group
        self.function = lambda_.DockerImageFunction(
            self,
            "Function",
            description="Runs PP-OCRv5 / PP-StructureV3 on one document per invocation",
            code=image_code(repo_root, DOCKERFILE, spec),
            ephemeral_storage_size=Size.mebibytes(ephemeral_storage_mib),
            environment={**function_environment(spec, environment, calls), **_WRITABLE_HOME},
            reserved_concurrent_executions=reserved_concurrency,
            retry_attempts=retry_attempts,
            max_event_age=max_event_age,
            on_failure=_TopicDestination(on_failure_topic),
            **access.function_props(spec, network),
        )
        # A long document's chunks are async invocations of this same function. The grant is a
        # policy of its own: the function depends on its role's default policy, so naming the
        # function's ARN there would be a circular dependency.
        iam.Policy(
            self,
            "InvokeChunks",
            roles=[self.role],
            statements=[
                iam.PolicyStatement(
                    actions=["lambda:InvokeFunction"], resources=[self.function.function_arn]
                )
            ],
        )
        for call in calls:
            call.grant(self.role)
        acknowledge_untraced(self.function)
        acknowledge(
            self.function,
            "Serverless-LambdaDLQ",
            "Asynchronous failures go to an on-failure destination (the error topic), which "
            "carries the request and the error to the completion handler; a DLQ would not.",
        )

    def grant_invoke(self, grantee: iam.IGrantable) -> None:
        """lambda:InvokeFunction on the unqualified function only (the invoker's async call)."""
        grant_invoke(self.function, grantee)


@jsii.implements(lambda_.IDestination)
class _TopicDestination:
    """An SNS on-failure destination without CDK's grant (`SnsDestination` grants
    kms:GenerateDataKey*); the stack grants sns:Publish and exact key actions instead."""

    def __init__(self, topic: sns.ITopic) -> None:
        self._topic = topic

    def bind(
        self,
        scope: Construct,
        fn: lambda_.IFunction,
        *,
        type: lambda_.DestinationType | None = None,
    ) -> lambda_.DestinationConfig:
        return lambda_.DestinationConfig(destination=self._topic.topic_arn)
