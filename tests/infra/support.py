"""Synthesize the CDK app as `cdk synth` would (cdk.json context, cdk-nag packs, built-in
CloudFormation validation) and query the result."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from aws_cdk import App, CfnElement
from aws_cdk.assertions import Template
from constructs import IConstruct

from infra.app import build_app
from infra.stack import PaddleIdpStack
from tests.paths import REPO_ROOT

CDK_JSON = REPO_ROOT / "cdk.json"

Resource = dict[str, Any]


def cdk_json_context() -> dict[str, Any]:
    context: dict[str, Any] = json.loads(CDK_JSON.read_text())["context"]
    return context


@dataclass
class Synthesized:
    """One synthesized cloud assembly; `error` is the synth failure (e.g. cdk-nag findings)."""

    app: App
    stack: PaddleIdpStack
    outdir: Path
    error: str | None
    template: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        template_file = self.outdir / f"{self.stack.artifact_id}.template.json"
        self.template = json.loads(template_file.read_text())

    @cached_property
    def assertions(self) -> Template:
        return Template.from_json(self.template)

    @cached_property
    def validation_report(self) -> dict[str, Any]:
        report: dict[str, Any] = json.loads((self.outdir / "validation-report.json").read_text())
        return report

    @cached_property
    def assets_manifest(self) -> dict[str, Any]:
        manifest_file = self.outdir / f"{self.stack.artifact_id}.assets.json"
        manifest: dict[str, Any] = json.loads(manifest_file.read_text())
        return manifest

    @property
    def resources(self) -> dict[str, Resource]:
        resources: dict[str, Resource] = self.template["Resources"]
        return resources

    def of_type(self, resource_type: str) -> dict[str, Resource]:
        return {
            logical_id: resource
            for logical_id, resource in self.resources.items()
            if resource["Type"] == resource_type
        }

    def props(self, logical_id: str) -> dict[str, Any]:
        properties: dict[str, Any] = self.resources[logical_id].get("Properties", {})
        return properties

    def only(self, resource_type: str) -> tuple[str, dict[str, Any]]:
        """The single resource of a type, as (logical id, properties)."""
        matches = self.of_type(resource_type)
        assert len(matches) == 1, f"expected one {resource_type}, found {sorted(matches)}"
        logical_id, resource = next(iter(matches.items()))
        return logical_id, resource.get("Properties", {})

    def logical_id(self, construct_path: str) -> str:
        """Logical id of the resource behind a construct path below the stack."""
        node: IConstruct = self.stack
        for part in construct_path.split("/"):
            node = node.node.find_child(part)
        element = node.node.default_child
        assert isinstance(element, CfnElement), construct_path
        return self.stack.get_logical_id(element)

    def job_queue(self) -> tuple[str, dict[str, Any]]:
        """The job queue: the one queue with a redrive policy."""
        (match,) = [
            (logical_id, resource["Properties"])
            for logical_id, resource in self.of_type("AWS::SQS::Queue").items()
            if "RedrivePolicy" in resource["Properties"]
        ]
        return match

    def scale_in_alarm(self) -> tuple[str, dict[str, Any]]:
        """The VL endpoint's idle-backlog alarm (exactly one), as (logical id, properties)."""
        (match,) = [
            (logical_id, resource["Properties"])
            for logical_id, resource in self.of_type("AWS::CloudWatch::Alarm").items()
            if resource["Properties"].get("MetricName") == "ApproximateBacklogSizePerInstance"
        ]
        return match

    def function_by_handler(self, handler: str) -> tuple[str, dict[str, Any]]:
        """A Lambda function by its zip Handler or its image Command."""
        for logical_id, resource in self.of_type("AWS::Lambda::Function").items():
            props = resource["Properties"]
            command = props.get("ImageConfig", {}).get("Command", [])
            if handler in (props.get("Handler"), *command):
                return logical_id, props
        raise AssertionError(f"no function with handler {handler}")


def synthesize(outdir: Path, **context: Any) -> Synthesized:
    """Build and synthesize the app with cdk.json's context plus `context` overrides."""
    app, stack = build_app(context={**cdk_json_context(), **context}, outdir=str(outdir))
    try:
        app.synth()
        error = None
    except RuntimeError as exc:  # validation failures (cdk-nag, CloudFormation Validate)
        error = str(exc)
    return Synthesized(app=app, stack=stack, outdir=outdir, error=error)


def ref(logical_id: str) -> dict[str, str]:
    return {"Ref": logical_id}


def arn_of(logical_id: str) -> dict[str, list[str]]:
    return {"Fn::GetAtt": [logical_id, "Arn"]}


def iter_statements(policy_document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    statements = policy_document.get("Statement", [])
    yield from statements if isinstance(statements, list) else [statements]


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]
