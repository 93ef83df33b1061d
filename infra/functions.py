"""What every Lambda function of the pipeline shares: its own role, a log group with retention,
no active tracing, the Powertools service name and metrics namespace, the shape of its outgoing
edges (`Call`; infra/calls.py has one per kind), and (for zip functions) one code asset and the
Powertools public layer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from aws_cdk import Aws, Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from idp.contract import names
from idp.contract.env.functions import Env
from idp.contract.topology import FunctionSpec
from infra.log_groups import LogPolicy
from infra.network import PrivateNetwork

ZIP_RUNTIME: Final = lambda_.Runtime.PYTHON_3_12
ARCHITECTURE: Final = lambda_.Architecture.X86_64
POWERTOOLS_LAYER_ACCOUNT: Final = "017000801446"

# What the zip functions ship, by inclusion: the packages their handlers import (the job
# contract, the AWS helpers, the job store, the job's flow) and lambdas/; nothing else of the
# repository, and none of the document engine (tests/infra/test_assets.py holds this to the
# handlers' imports).
ZIP_PACKAGES: Final = ("idp/contract", "idp/aws", "idp/jobstore", "idp/flow", "lambdas")


def zip_code_excludes(packages: Sequence[str] = ZIP_PACKAGES) -> list[str]:
    """Exclude patterns that keep only `packages` (and their parents' __init__.py)."""
    kept: list[str] = []
    for package in packages:
        parts = package.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            kept += [f"!{parent}", f"!{parent}/__init__.py"]
        kept += [f"!{package}", f"!{package}/**"]
    return ["*", ".*", *dict.fromkeys(kept), "**/__pycache__", "**/*.pyc"]


def zip_code(repo_root: Path) -> lambda_.Code:
    """The one code asset of the zip functions (plain files, no Docker bundling)."""
    return lambda_.Code.from_asset(str(repo_root), exclude=zip_code_excludes())


def powertools_layer_arn(version: int) -> str:
    return (
        f"arn:{Aws.PARTITION}:lambda:{Aws.REGION}:{POWERTOOLS_LAYER_ACCOUNT}:layer:"
        f"AWSLambdaPowertoolsPythonV3-python312-x86_64:{version}"
    )


def powertools_layer(scope: Construct, construct_id: str, *, version: int) -> lambda_.ILayerVersion:
    return lambda_.LayerVersion.from_layer_version_arn(
        scope, construct_id, powertools_layer_arn(version)
    )


class Call(Protocol):
    """An outgoing edge of a function: the environment variables that name its target, and the
    grants the call needs. Declared here, below both the calls and the functions that make them,
    so that infra/calls.py may name the processor it invokes."""

    @property
    def environment(self) -> Mapping[Env, str]: ...

    def grant(self, role: iam.Role) -> None: ...


def function_environment(
    spec: FunctionSpec, values: Mapping[Env, str], calls: Sequence[Call] = ()
) -> dict[str, str]:
    """The environment a function reads, exactly the keys its spec declares: the stack's
    `values`, and what its `calls` name as their targets.

    Raises KeyError when neither has a value for a declared key, so a function can never
    be deployed without a variable it reads.
    """
    own: dict[Env, str] = {
        Env.POWERTOOLS_SERVICE_NAME: spec.service.value,
        Env.POWERTOOLS_METRICS_NAMESPACE: names.METRICS_NAMESPACE,
    }
    merged = {**values, **{k: v for call in calls for k, v in call.environment.items()}, **own}
    return {key.value: merged[key] for key in spec.env}


class FunctionRole(Construct):
    """A function's own execution role and log group; the role may write only that log group."""

    def __init__(self, scope: Construct, construct_id: str, *, log_policy: LogPolicy) -> None:
        super().__init__(scope, construct_id)
        self.log_group = log_policy.group(self, "LogGroup")
        self.role = iam.Role(self, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[self.log_group.log_group_arn],
            )
        )

    def function_props(
        self, spec: FunctionSpec, network: PrivateNetwork | None = None
    ) -> dict[str, Any]:
        """The properties every function of the pipeline is built with: its spec's size, the
        one architecture, this role and log group, no active tracing, and in private-network
        mode the VPC's isolated subnets (and this role's right to attach to them).

        Tracing is off because no handler uses Powertools' Tracer: X-Ray would hold only
        Lambda's own segments, for the price of xray:* grants on "*" in every role.
        """
        props: dict[str, Any] = {
            "architecture": ARCHITECTURE,
            "memory_size": spec.memory_mb,
            "timeout": Duration.seconds(spec.timeout_seconds),
            "role": self.role,
            "log_group": self.log_group,
            "tracing": lambda_.Tracing.DISABLED,
        }
        if network is not None:
            network.allow_attach(self.role)
            props |= {
                "vpc": network.vpc,
                "vpc_subnets": network.subnets,
                "security_groups": [network.security_group],
            }
        return props


@dataclass(frozen=True)
class ZipBuild:
    """What the zip functions share: one code asset, its layers, the stack's environment
    values (each function takes the keys its spec declares) and the log retention."""

    code: lambda_.Code
    layers: Sequence[lambda_.ILayerVersion]
    environment: Mapping[Env, str]
    log_policy: LogPolicy
    network: PrivateNetwork | None = None
