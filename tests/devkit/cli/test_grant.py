"""`idp grant` against a deployed stack (CloudFormation outputs in the emulator): the policy it
prints names the stack's own queue, buckets and data key, and IAM takes it as it is."""

from __future__ import annotations

import json
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws
from typer.testing import CliRunner

from devkit.cli.main import app
from idp.contract import names
from idp.contract.names import Output

REGION = "eu-west-1"


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A stack named as the CLI's default, with the outputs a deployed one has; its outputs."""
    for variable in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        key = boto3.client("kms", region_name=REGION).create_key()["KeyMetadata"]["Arn"]
        outputs = {
            Output.INPUT_BUCKET: "paddle-idp-input-1",
            Output.RESULTS_BUCKET: "paddle-idp-results-1",
            Output.JOBS_TABLE: "paddle-idp-jobs-1",
            Output.JOB_QUEUE_URL: f"https://sqs.{REGION}.amazonaws.com/123456789012/jobs-1",
            Output.DATA_KEY_ARN: key,
        }
        template = {
            "Resources": {"Placeholder": {"Type": "AWS::SNS::Topic"}},
            "Outputs": {str(name): {"Value": value} for name, value in outputs.items()},
        }
        boto3.client("cloudformation", region_name=REGION).create_stack(
            StackName=names.STACK_NAME, TemplateBody=json.dumps(template)
        )
        yield {str(name): value for name, value in outputs.items()}


def test_grant_prints_the_policy_of_the_stacks_own_resources(stack: dict[str, str]) -> None:
    # WHEN team A's grant is asked for, with its upload prefix
    done = CliRunner().invoke(app, ["grant", "AROATEAMAEXAMPLE", "--input-prefix", "team-a/"])

    # THEN it is a policy on this stack's queue, buckets and key, and IAM accepts it
    assert done.exit_code == 0, done.output
    policy = json.loads(done.stdout)
    by_sid = {statement["Sid"]: statement for statement in policy["Statement"]}
    assert by_sid["SubmitJobs"]["Resource"] == f"arn:aws:sqs:{REGION}:123456789012:jobs-1"
    assert by_sid["UploadOwnInputs"]["Resource"] == ["arn:aws:s3:::paddle-idp-input-1/team-a/*"]
    assert by_sid["ReadOwnResults"]["Resource"] == (
        "arn:aws:s3:::paddle-idp-results-1/results/AROATEAMAEXAMPLE:*"
    )
    assert by_sid["UseTheDataKeyThroughS3AndSqs"]["Resource"] == stack[Output.DATA_KEY_ARN]
    iam = boto3.client("iam", region_name=REGION)
    iam.create_policy(PolicyName="team-a", PolicyDocument=done.stdout)


def test_grant_refuses_what_is_no_principal_id(stack: dict[str, str]) -> None:
    done = CliRunner().invoke(app, ["grant", "../team-b"])
    assert done.exit_code == 2
    assert "principal id" in done.output
