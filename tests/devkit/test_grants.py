"""A producer's own slice of results: the policy `idp grant` prints lets a team read its own
results and refuses another team's, on S3 as the emulator enforces identity policies."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.core import set_initial_no_auth_action_count

from devkit.client import PipelineNames
from devkit.grants import owner_pattern, producer_policy, queue_arn
from idp.contract import names
from idp.contract.results import UNOWNED, result_key, results_prefix

REGION = "us-east-1"
QUEUE_URL = "https://sqs.us-east-1.amazonaws.com/123456789012/paddle-idp-jobs"
INPUT_BUCKET = "paddle-idp-input"
RESULTS_BUCKET = "paddle-idp-results"
PIPELINE = PipelineNames(
    input_bucket=INPUT_BUCKET,
    results_bucket=RESULTS_BUCKET,
    jobs_table="paddle-idp-jobs",
    queue_url=QUEUE_URL,
)
TEAM_B = "AROAOTHERTEAMBEXAMPLE"
TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:root"}},
    ],
}


def test_results_sit_under_their_owners_slice() -> None:
    assert (
        result_key("job-1", owner="AROATEAMA:alice") == "results/AROATEAMA:alice/job-1/result.json"
    )
    assert results_prefix("job-1", owner=None) == f"{names.RESULTS_PREFIX}{UNOWNED}/job-1/"
    # An owner can neither climb out of results/ nor land in the result cache
    for bad in ("../x", "a/b", ".cache", ""):
        with pytest.raises(ValueError, match="principal id"):
            results_prefix("job-1", owner=bad or "/")


def test_a_roles_slice_covers_its_sessions_and_a_users_only_itself() -> None:
    assert owner_pattern("AROATEAMA") == "AROATEAMA:"
    assert owner_pattern("AROATEAMA:alice") == "AROATEAMA:alice/"
    assert owner_pattern("AIDAUSER") == "AIDAUSER/"
    assert (
        queue_arn(QUEUE_URL, region=REGION) == "arn:aws:sqs:us-east-1:123456789012:paddle-idp-jobs"
    )


def test_the_policy_names_only_the_producers_prefixes() -> None:
    policy = producer_policy(
        "AROATEAMA", PIPELINE, region=REGION, input_prefixes=["uploads/team-a/"]
    )
    by_sid = {statement["Sid"]: statement for statement in policy["Statement"]}
    assert by_sid["ReadOwnResults"]["Resource"] == (
        f"arn:aws:s3:::{RESULTS_BUCKET}/results/AROATEAMA:*"
    )
    assert by_sid["ListOwnResults"]["Condition"] == {
        "StringLike": {"s3:prefix": "results/AROATEAMA:*"}
    }
    assert by_sid["UploadOwnInputs"]["Resource"] == [
        f"arn:aws:s3:::{INPUT_BUCKET}/uploads/team-a/*"
    ]
    assert "Condition" in by_sid["UseTheDataKeyThroughS3AndSqs"]


def test_the_data_key_is_the_stacks_own_where_the_stack_names_it() -> None:
    # GIVEN the pipeline's names with the stack's DataKeyArn output, and without it
    key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    keyed = dataclasses.replace(PIPELINE, data_key_arn=key)

    def key_statement(pipeline: PipelineNames) -> dict[str, Any]:
        policy = producer_policy("AROATEAMA", pipeline, region=REGION)
        statements: list[dict[str, Any]] = policy["Statement"]
        (statement,) = [s for s in statements if s["Sid"].startswith("UseTheDataKey")]
        return statement

    # THEN the grant names that key alone; without it any key, still only through S3 and SQS
    assert key_statement(keyed)["Resource"] == key
    assert key_statement(PIPELINE)["Resource"] == "*"
    assert key_statement(PIPELINE)["Condition"] == key_statement(keyed)["Condition"]


# The six calls before team A's own are the test's setup, made without credentials.
@set_initial_no_auth_action_count(6)
@mock_aws
def test_team_a_reads_its_own_results_and_not_team_bs() -> None:
    # GIVEN team A's role with the policy `idp grant` prints for its role id, and one result of
    # each team written where the pipeline writes it
    iam = boto3.client("iam", region_name=REGION)
    role = iam.create_role(RoleName="team-a", AssumeRolePolicyDocument=json.dumps(TRUST))["Role"]
    team_a = role["RoleId"]
    policy = producer_policy(team_a, PIPELINE, region=REGION)
    iam.put_role_policy(RoleName="team-a", PolicyName="slice", PolicyDocument=json.dumps(policy))
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket=RESULTS_BUCKET)
    own = result_key("job-a", owner=f"{team_a}:alice")
    other = result_key("job-b", owner=f"{TEAM_B}:bob")
    s3.put_object(Bucket=RESULTS_BUCKET, Key=own, Body=b'{"job_id": "job-a"}')
    s3.put_object(Bucket=RESULTS_BUCKET, Key=other, Body=b'{"job_id": "job-b"}')
    credentials = boto3.client("sts", region_name=REGION).assume_role(
        RoleArn=role["Arn"], RoleSessionName="alice"
    )["Credentials"]
    as_team_a = boto3.client(
        "s3",
        region_name=REGION,
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
    )

    # WHEN team A reads both THEN its own result comes back and team B's is refused
    assert as_team_a.get_object(Bucket=RESULTS_BUCKET, Key=own)["Body"].read() == (
        b'{"job_id": "job-a"}'
    )
    with pytest.raises(ClientError) as refused:
        as_team_a.get_object(Bucket=RESULTS_BUCKET, Key=other)
    assert refused.value.response["Error"]["Code"] == "AccessDenied"
