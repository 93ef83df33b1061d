"""Security gate: cdk-nag (AwsSolutions + Serverless) with only justified acknowledgements,
least-privilege IAM, no public resource policies, and cfn-lint with zero errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import pytest
from aws_cdk import Validations
from cfnlint.api import lint  # type: ignore[import-untyped]

from infra.network import LAMBDA_VPC_ACTIONS, SAGEMAKER_VPC_ACTIONS
from tests.infra.support import Synthesized, as_list, cdk_json_context, iter_statements

SYNTHS: Final = ["full", "cpu_only", "private"]

# Actions AWS offers no resource-level permission for: the only ones allowed on "*".
RESOURCE_WILDCARD_ALLOWED: Final = {
    "ecr:GetAuthorizationToken": "registry-wide token; image pulls are scoped to the repository",
    "cloudwatch:PutMetricData": "no resource-level permissions; limited by namespace condition",
    "dynamodb:ListStreams": "no resource-level permissions; the stream reads name the stream",
    # Private-network mode: the interfaces that attach a function or the endpoint to the VPC
    # are created at run time (infra/network.py); Describe* has no resource-level permissions.
    **dict.fromkeys(
        (*LAMBDA_VPC_ACTIONS, *SAGEMAKER_VPC_ACTIONS), "network interfaces named at run time"
    ),
}
NAG_PACKS: Final = {"AwsSolutions", "Serverless"}
# aws-cdk-lib's own acknowledgements of its built-in CloudFormation validation, made by the
# Vpc construct of private-network mode (its AZs from stack.availabilityZones; the flow log's
# camelCase DestinationOptions), not by this project.
CDK_OWN_ACKNOWLEDGEMENTS: Final = {
    "CloudFormation-Validate::W3010",
    "CloudFormation-Validate::F3002",
    "CloudFormation-Validate::F3003",
}


@pytest.fixture(params=SYNTHS)
def synth(request: pytest.FixtureRequest) -> Synthesized:
    synthesized: Synthesized = request.getfixturevalue(request.param)
    return synthesized


def _identity_statements(synth: Synthesized) -> Iterator[tuple[str, dict[str, Any]]]:
    for logical_id, resource in synth.resources.items():
        props = resource.get("Properties", {})
        if resource["Type"] in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            documents = [props["PolicyDocument"]]
        elif resource["Type"] == "AWS::IAM::Role":
            documents = [p["PolicyDocument"] for p in props.get("Policies", [])]
        else:
            continue
        for document in documents:
            for statement in iter_statements(document):
                yield logical_id, statement


def _acknowledgements(synth: Synthesized) -> list[tuple[str, str, str]]:
    """(construct path, acknowledged id, reason) for every acknowledgement in the app."""
    found = []
    for construct in synth.app.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                for rule_id, reason in dict(entry.data).items():
                    found.append((construct.node.path, rule_id, reason))
    return found


def test_synth_passes_cdk_nag_and_cloudformation_validation(synth: Synthesized) -> None:
    # cdk-nag 3 reports through CDK validation: any unacknowledged finding fails synth.
    assert synth.error is None, synth.error
    reports = {r["pluginName"]: r for r in synth.validation_report["pluginReports"]}
    assert set(reports) >= NAG_PACKS
    # The CDK's built-in CloudFormation validation also ran; its findings fail synth too.
    assert cdk_json_context()["@aws-cdk/core:validateAgainstDefaultRules"] is True
    for name, report in reports.items():
        assert report["conclusion"] == "success", name
        assert report["violations"] == [], name


def test_every_acknowledgement_is_scoped_reasoned_and_used(synth: Synthesized) -> None:
    acknowledgements = _acknowledgements(synth)
    assert acknowledgements
    suppressed = {
        (violation["acknowledgedAt"], violation["acknowledgedId"])
        for report in synth.validation_report["pluginReports"]
        for violation in report.get("suppressedViolations", [])
    }
    stack_path = synth.stack.node.path
    for path, rule_id, reason in acknowledgements:
        if rule_id in CDK_OWN_ACKNOWLEDGEMENTS:
            continue
        pack, _, rule = rule_id.partition("::")
        assert pack in NAG_PACKS, rule_id
        assert rule.startswith(f"{pack}-"), rule_id
        assert len(reason.split()) >= 8, f"{path}: {rule_id} needs a real reason"
        # Scoped to one resource: never the app or the whole stack.
        assert path.startswith(f"{stack_path}/"), (path, rule_id)
        # Not stale: each acknowledgement suppresses a finding that really occurs.
        assert (path, rule_id) in suppressed, (path, rule_id)


def test_no_iam_statement_allows_all_actions_or_whole_services(synth: Synthesized) -> None:
    for logical_id, statement in _identity_statements(synth):
        assert "NotAction" not in statement, logical_id
        assert "NotResource" not in statement, logical_id
        if statement["Effect"] != "Allow":
            continue
        for action in as_list(statement["Action"]):
            assert action != "*", logical_id
            assert not action.endswith(":*"), (logical_id, action)


def test_wildcard_resources_only_for_actions_without_resource_permissions(
    synth: Synthesized,
) -> None:
    for logical_id, statement in _identity_statements(synth):
        if statement["Effect"] == "Allow" and "*" in as_list(statement["Resource"]):
            actions = set(as_list(statement["Action"]))
            assert actions <= set(RESOURCE_WILDCARD_ALLOWED), (logical_id, actions)


def test_no_resource_policy_allows_the_public(synth: Synthesized) -> None:
    policy_documents = []
    for resource in synth.resources.values():
        props = resource.get("Properties", {})
        if resource["Type"] in (
            "AWS::S3::BucketPolicy",
            "AWS::SQS::QueuePolicy",
            "AWS::SNS::TopicPolicy",
        ):
            policy_documents.append(props["PolicyDocument"])
        elif resource["Type"] == "AWS::KMS::Key":
            policy_documents.append(props["KeyPolicy"])
    assert policy_documents
    for document in policy_documents:
        for statement in iter_statements(document):
            if statement["Effect"] == "Allow":
                assert statement["Principal"] not in ("*", {"AWS": "*"}), statement
                if "Service" in statement["Principal"]:
                    assert "Condition" in statement, statement  # confused-deputy guard


def test_kms_key_rotates(synth: Synthesized) -> None:
    _, key = synth.only("AWS::KMS::Key")
    assert key["EnableKeyRotation"] is True


def test_cfn_lint_finds_no_errors(synth: Synthesized) -> None:
    matches = lint(json.dumps(synth.template), regions=["us-east-1"])
    errors = [
        f"{m.rule.id} {m.message} at {'/'.join(map(str, m.path))}"
        for m in matches
        if m.rule.id.startswith("E")
    ]
    assert errors == []
