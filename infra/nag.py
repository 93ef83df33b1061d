"""cdk-nag acknowledgements, each scoped to one resource and carrying its reason.

The constructs call these helpers right where a finding arises (a prefix-scoped S3 grant,
tracing left off, the pinned runtime), so the justification sits next to its cause. Findings
that can be fixed are fixed instead; nothing is acknowledged stack-wide.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, CfnResource, Stack, Validations
from constructs import IConstruct


def acknowledge(scope: IConstruct, rule_id: str, reason: str) -> None:
    """Acknowledge one finding (e.g. "AwsSolutions-IAM5[Resource::*]") on `scope` only.

    The id is qualified with its pack ("AwsSolutions::AwsSolutions-IAM5[...]"), the form the
    validation report asks for; an unqualified id would be recorded as an annotation rule.
    """
    if not reason.strip():
        raise ValueError(f"acknowledging {rule_id} needs a reason")
    pack = rule_id.split("-", 1)[0]
    Validations.of(scope).acknowledge(Acknowledgment(id=f"{pack}::{rule_id}", reason=reason))


def wildcard_resource(resource: str) -> str:
    """The AwsSolutions-IAM5 finding id for a wildcard resource as cdk-nag renders it."""
    return f"AwsSolutions-IAM5[Resource::{resource}]"


def arn_of(construct: IConstruct) -> str:
    """How cdk-nag renders `Fn::GetAtt [<logical id>, Arn]` of a construct's resource."""
    child = construct.node.default_child
    resource = child if isinstance(child, CfnResource) else construct
    if not isinstance(resource, CfnResource):
        raise TypeError(f"{construct.node.path} is not, and has no, CloudFormation resource")
    return f"<{Stack.of(construct).get_logical_id(resource)}.Arn>"


def acknowledge_untraced(function: IConstruct) -> None:
    acknowledge(
        function,
        "Serverless-LambdaTracing",
        "Active tracing is off on purpose: no handler uses Powertools' Tracer, so X-Ray would "
        "record only Lambda's own segments; logs and Powertools metrics carry the job's story.",
    )


def acknowledge_python_runtime(function: IConstruct) -> None:
    reason = (
        "The SPEC pins every function to Python 3.12: the same interpreter as the OCR processor "
        "image and the python312 build of the Powertools layer; they are upgraded together."
    )
    acknowledge(function, "AwsSolutions-L1", reason)
    acknowledge(function, "Serverless-LambdaLatestVersion", reason)
