"""The grant table of docs/security.md, and the same table read from a synthesized template.

Each role's grants are (action, resource) pairs with the resource written by name, as the docs
write it: `input-bucket/*`, `results-bucket/results/*`, `jobs-table`, `data-key`, ... A test
compares the two, so the docs say exactly what the template grants (tests/infra/test_grants.py).
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Final

from idp.contract import names
from idp.contract.topology import FUNCTIONS, Function
from tests.infra.support import Synthesized, as_list, iter_statements
from tests.paths import REPO_ROOT

Grant = tuple[str, str]  # (action, resource by name)

DOCS_PAGE: Final = REPO_ROOT / "docs" / "security.md"
VL_ROLE: Final = "VlEndpoint"
# The table's first column: each function by its construct id, and the VL endpoint.
ROLES: Final = (*(function.value for function in Function), VL_ROLE)
_ROW = re.compile(r"^\|\s*(?P<role>[A-Za-z]+)\s*\|(?P<actions>[^|]+)\|(?P<resources>[^|]+)\|")
_CODE = re.compile(r"`([^`]+)`")


def render(value: Any) -> str:
    """A template value as a string: <LogicalId>, <LogicalId.Attr>, joins and subs inlined."""
    if isinstance(value, str):
        return value
    if "Ref" in value:
        return f"<{value['Ref']}>"
    if "Fn::GetAtt" in value:
        logical_id, attribute = value["Fn::GetAtt"]
        return f"<{logical_id}.{attribute}>"
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(render(part) for part in parts)
    if "Fn::Sub" in value:
        return str(value["Fn::Sub"])
    raise AssertionError(f"cannot render {value}")


def role_of(synth: Synthesized, role: str) -> str:
    """The logical id of a function's or the VL endpoint's role."""
    if role == VL_ROLE:
        _, model = synth.only("AWS::SageMaker::Model")
        return str(model["ExecutionRoleArn"]["Fn::GetAtt"][0])
    _, props = synth.function_by_handler(FUNCTIONS[Function(role)].handler)
    return str(props["Role"]["Fn::GetAtt"][0])


def raw_grants(synth: Synthesized, role_id: str) -> set[Grant]:
    """Every (action, rendered resource) the identity policies of a role allow."""
    granted: set[Grant] = set()
    for policy in synth.of_type("AWS::IAM::Policy").values():
        if {"Ref": role_id} not in policy["Properties"]["Roles"]:
            continue
        for statement in iter_statements(policy["Properties"]["PolicyDocument"]):
            assert statement["Effect"] == "Allow"
            for action in as_list(statement["Action"]):
                for resource in as_list(statement["Resource"]):
                    granted.add((action, render(resource)))
    return granted


class ResourceNames:
    """Rendered ARNs of the stack's resources → the names the docs' table uses."""

    def __init__(self, synth: Synthesized) -> None:
        self.synth = synth
        table_id, _ = synth.only("AWS::DynamoDB::Table")
        self._names: dict[str, str] = {
            f"<{synth.only('AWS::KMS::Key')[0]}.Arn>": "data-key",
            f"<{synth.logical_id('Storage/InputBucket')}.Arn>": "input-bucket",
            f"<{synth.logical_id('Storage/ResultsBucket')}.Arn>": "results-bucket",
            f"<{synth.logical_id('Storage/ModelCacheBucket')}.Arn>": "model-cache-bucket",
            f"<{table_id}.Arn>": "jobs-table",
            (
                "arn:<AWS::Partition>:dynamodb:<AWS::Region>:<AWS::AccountId>:table/"
                f"<{table_id}>/index/{names.STATUS_INDEX}"
            ): f"jobs-table/index/{names.STATUS_INDEX}",
            f"<{table_id}.StreamArn>": "jobs-table/stream",
            f"<{synth.job_queue()[0]}.Arn>": "job-queue",
            "*": "*",
        }
        processor_id, _ = synth.function_by_handler(FUNCTIONS[Function.PROCESSOR].handler)
        self._names[f"<{processor_id}.Arn>"] = "processor"
        converter_id, _ = synth.function_by_handler(FUNCTIONS[Function.CONVERTER].handler)
        self._names[f"<{converter_id}.Arn>"] = "converter"
        for logical_id, topic in synth.of_type("AWS::SNS::Topic").items():
            name = str(topic["Properties"]["TopicName"]).rsplit("-", 1)[-1]
            self._names[f"<{logical_id}>"] = _kebab(name)
        for logical_id, _bus in synth.of_type("AWS::Events::EventBus").items():
            self._names[f"<{logical_id}.Arn>"] = "event-bus"
        for logical_id, _endpoint in synth.of_type("AWS::SageMaker::Endpoint").items():
            self._names[f"<{logical_id}>"] = "vl-endpoint"
        for logical_id, _alarm in [synth.scale_in_alarm()] if self._has_vl() else []:
            self._names[f"<{logical_id}.Arn>"] = "scale-in-alarm"
        self._names[f"<{synth.logical_id('AsyncFailureQueue/Queue')}.Arn>"] = "async-failure-queue"

    def _has_vl(self) -> bool:
        return bool(self.synth.of_type("AWS::SageMaker::Endpoint"))

    def name(self, resource: str, *, log_group: str | None = None) -> str:
        if resource == log_group:
            return "own-log-group"
        if resource in self._names:
            return self._names[resource]
        for arn, name in self._names.items():
            if arn != "*" and resource.startswith(arn + "/"):
                return name + resource[len(arn) :]
        if "container-assets" in resource:
            return "asset-repository"
        raise AssertionError(f"no name for {resource}: add it to tests/infra/grant_table.py")


def template_grants(synth: Synthesized) -> dict[str, set[Grant]]:
    """Each role's grants, its resources by name."""
    resource_names = ResourceNames(synth)
    grants: dict[str, set[Grant]] = {}
    for role in deployed_roles(synth):
        log_group = _log_group_of(synth, role)
        grants[role] = {
            (action, resource_names.name(resource, log_group=log_group))
            for action, resource in raw_grants(synth, role_of(synth, role))
        }
    return grants


def deployed_roles(synth: Synthesized) -> list[str]:
    """The roles a synthesized mode has (CPU-only: no scale-in handler, no VL endpoint)."""
    handlers = {
        *(props.get("Handler") for props in _functions(synth)),
        *(
            c
            for props in _functions(synth)
            for c in props.get("ImageConfig", {}).get("Command", [])
        ),
    }
    roles = [f.value for f in Function if FUNCTIONS[f].handler in handlers]
    return roles + ([VL_ROLE] if synth.of_type("AWS::SageMaker::Model") else [])


def _functions(synth: Synthesized) -> list[dict[str, Any]]:
    return [r["Properties"] for r in synth.of_type("AWS::Lambda::Function").values()]


def _log_group_of(synth: Synthesized, role: str) -> str:
    if role == VL_ROLE:
        (log_group,) = [
            f"<{logical_id}.Arn>"
            for logical_id, group in synth.of_type("AWS::Logs::LogGroup").items()
            if "/aws/sagemaker/Endpoints/" in group["Properties"].get("LogGroupName", "")
        ]
        return log_group
    _, props = synth.function_by_handler(FUNCTIONS[Function(role)].handler)
    return f"<{props['LoggingConfig']['LogGroup']['Ref']}.Arn>"


def docs_grants(page: Path = DOCS_PAGE) -> dict[str, set[Grant]]:
    """The grant table of the docs: `| Role | `action` ... | `resource` ... | why |` rows."""
    grants: dict[str, set[Grant]] = defaultdict(set)
    for line in page.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if match is None or match["role"] not in ROLES:
            continue
        actions = _CODE.findall(match["actions"])
        resources = _CODE.findall(match["resources"])
        assert actions, f"a grant row without actions: {line}"
        assert resources, f"a grant row without resources: {line}"
        grants[match["role"]].update((a, r) for a in actions for r in resources)
    return dict(grants)


def _kebab(name: str) -> str:
    """VlSuccessTopic → vl-success-topic."""
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()
