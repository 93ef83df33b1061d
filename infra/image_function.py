"""What the container-image functions share (the OCR processor, the Office converter): an image
built from the repository root, the function's own role and log group, and one caller's grant."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from idp.contract.env.functions import Env
from idp.contract.topology import FunctionSpec
from infra.functions import Call, FunctionRole, function_environment
from infra.log_groups import LogPolicy
from infra.nag import acknowledge, acknowledge_untraced
from infra.network import PrivateNetwork


@dataclass(frozen=True)
class ImageBuild:
    """What the image functions share: the repository root (their build context), the stack's
    environment values (each function takes the keys its spec declares), the log retention and,
    in private-network mode, the VPC."""

    repo_root: Path
    environment: Mapping[Env, str]
    log_policy: LogPolicy
    network: PrivateNetwork | None = None


def image_code(repo_root: Path, dockerfile: str, spec: FunctionSpec) -> lambda_.DockerImageCode:
    """A container-image function's code: its Dockerfile built with the repository root as
    context (filtered by .dockerignore), for the one architecture, its CMD the spec's handler."""
    return lambda_.DockerImageCode.from_image_asset(
        str(repo_root),
        file=dockerfile,
        cmd=[spec.handler],
        platform=ecr_assets.Platform.LINUX_AMD64,
    )


class ImageFunction(Construct):
    """A DockerImageFunction built from its class's `dockerfile` (build context: the repo root),
    with its own role and log group. Its environment is what its spec declares (and its `calls`
    name) plus `writable_home`, since only /tmp is writable on Lambda; `function_props` are a
    subclass's own (retries, storage). One caller invokes it (`grant_invoke`).
    """

    dockerfile: ClassVar[str]
    description: ClassVar[str]
    writable_home: ClassVar[Mapping[str, str]]
    # Why the function needs no dead-letter queue (cdk-nag's Serverless-LambdaDLQ).
    no_dead_letter_queue: ClassVar[str]

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        spec: FunctionSpec,
        build: ImageBuild,
        calls: Sequence[Call] = (),
        **function_props: Any,
    ) -> None:
        super().__init__(scope, construct_id)
        access = FunctionRole(self, "Access", log_policy=build.log_policy)
        self.role = access.role
        self.log_group = access.log_group
        environment = function_environment(spec, build.environment, calls)
        self.function = lambda_.DockerImageFunction(
            self,
            "Function",
            description=self.description,
            code=image_code(build.repo_root, self.dockerfile, spec),
            environment={**environment, **self.writable_home},
            **function_props,
            **access.function_props(spec, build.network),
        )
        acknowledge_untraced(self.function)
        acknowledge(self.function, "Serverless-LambdaDLQ", self.no_dead_letter_queue)

    def grant_invoke(self, grantee: iam.IGrantable) -> None:
        """lambda:InvokeFunction on the unqualified function only (its caller's call)."""
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["lambda:InvokeFunction"], resources=[self.function.function_arn]
            )
        )
