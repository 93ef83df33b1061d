"""The Office converter: a container-image Lambda (Debian, LibreOffice headless) that the
processor invokes synchronously for each Office document. It reads the input and writes the
job's converted PDF; it holds no grant on the status table, the model cache or other results,
so a document that subverts LibreOffice reaches nothing else (docs/security.md)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from idp.contract.env.functions import Env
from idp.contract.topology import FunctionSpec
from infra.functions import FunctionRole, function_environment, grant_invoke, image_code
from infra.log_groups import LogPolicy
from infra.nag import acknowledge, acknowledge_untraced
from infra.network import PrivateNetwork

DOCKERFILE: Final = "office_converter_image/Dockerfile"
# Only /tmp is writable on Lambda: LibreOffice's profile and scratch files go there.
_WRITABLE_HOME: Final = {"HOME": "/tmp"}  # noqa: S108


class OfficeConverter(Construct):
    """DockerImageFunction built from office_converter_image/ (build context: the repo root).

    Invoked synchronously (the processor waits for the PDF), so a failure is the caller's to
    record: no retries, no destination.
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
        network: PrivateNetwork | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        access = FunctionRole(self, "Access", log_policy=log_policy)
        self.role = access.role
        self.log_group = access.log_group
        self.function = lambda_.DockerImageFunction(
            self,
            "Function",
            description="Converts one Office document to PDF (LibreOffice) for the processor",
            code=image_code(repo_root, DOCKERFILE, spec),
            environment={**function_environment(spec, environment, ()), **_WRITABLE_HOME},
            **access.function_props(spec, network),
        )
        acknowledge_untraced(self.function)
        acknowledge(
            self.function,
            "Serverless-LambdaDLQ",
            "Invoked synchronously by the processor, which records the converter's error on the "
            "job; an asynchronous DLQ would never receive anything.",
        )

    def grant_invoke(self, grantee: iam.IGrantable) -> None:
        """lambda:InvokeFunction on the unqualified function only (the processor's call)."""
        grant_invoke(self.function, grantee)
