"""The OCR processor: a container-image Lambda running PP-OCRv5 / PP-StructureV3 on CPU,
invoked asynchronously by the invoker, one job per invocation; a long document's page chunks are
invocations of their own, which the processor starts itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import jsii
from aws_cdk import Duration, Size
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from constructs import Construct

from idp.contract.topology import FunctionSpec
from infra.functions import Call
from infra.image_function import ImageBuild, ImageFunction


class OcrProcessor(ImageFunction):
    """DockerImageFunction built from ocr_processor_image/ (build context: the repo root).

    Asynchronous invocations retry `retry_attempts` times, then go to `on_failure_topic` as a
    Lambda destination record, so a crash or a timeout still ends the job FAILED. Ephemeral
    storage holds the model cache between warm invocations.
    """

    dockerfile = "ocr_processor_image/Dockerfile"
    description = "Runs PP-OCRv5 / PP-StructureV3 on one document per invocation"
    # PaddleX and anything using ~ must write to /tmp.
    writable_home: ClassVar[Mapping[str, str]] = {
        "HOME": "/tmp",  # noqa: S108
        "PADDLE_PDX_CACHE_HOME": "/tmp/paddlex",  # noqa: S108
    }
    no_dead_letter_queue = (
        "Asynchronous failures go to an on-failure destination (the error topic), which "
        "carries the request and the error to the completion handler; a DLQ would not."
    )

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        spec: FunctionSpec,
        build: ImageBuild,
        ephemeral_storage_mib: int,
        reserved_concurrency: int | None,
        retry_attempts: int,
        max_event_age: Duration,
        on_failure_topic: sns.ITopic,
        calls: Sequence[Call] = (),
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            spec=spec,
            build=build,
            calls=calls,
            ephemeral_storage_size=Size.mebibytes(ephemeral_storage_mib),
            reserved_concurrent_executions=reserved_concurrency,
            retry_attempts=retry_attempts,
            max_event_age=max_event_age,
            on_failure=_TopicDestination(on_failure_topic),
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
