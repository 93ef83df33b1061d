"""Buckets: encryption, public access, TLS, versioning, access logs, lifecycle, job events."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk.assertions import Match

from idp.contract import names
from tests.infra.support import Synthesized, arn_of, iter_statements, ref

BLOCK_ALL = {
    "BlockPublicAcls": True,
    "BlockPublicPolicy": True,
    "IgnorePublicAcls": True,
    "RestrictPublicBuckets": True,
}


def _bucket_ids(full: Synthesized) -> dict[str, str]:
    """Logical ids of the four buckets, keyed by their role."""
    ids: dict[str, str] = {}
    for logical_id in full.of_type("AWS::S3::Bucket"):
        for role in ("AccessLog", "Input", "Results", "ModelCache"):
            if logical_id.startswith(f"Storage{role}Bucket"):
                ids[role] = logical_id
    assert sorted(ids) == ["AccessLog", "Input", "ModelCache", "Results"]
    return ids


def _bucket_policy(full: Synthesized, bucket_id: str) -> dict[str, Any]:
    for resource in full.of_type("AWS::S3::BucketPolicy").values():
        if resource["Properties"]["Bucket"] == ref(bucket_id):
            document: dict[str, Any] = resource["Properties"]["PolicyDocument"]
            return document
    raise AssertionError(f"no bucket policy for {bucket_id}")


def test_every_bucket_blocks_public_access(full: Synthesized) -> None:
    # GIVEN the synthesized stack WHEN listing its buckets THEN each blocks all public access
    buckets = full.of_type("AWS::S3::Bucket")
    assert len(buckets) == 4
    for logical_id, bucket in buckets.items():
        assert bucket["Properties"]["PublicAccessBlockConfiguration"] == BLOCK_ALL, logical_id
        assert bucket["Properties"]["OwnershipControls"] == {
            "Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]
        }


def test_every_bucket_denies_requests_without_tls(full: Synthesized) -> None:
    for logical_id in full.of_type("AWS::S3::Bucket"):
        statements = list(iter_statements(_bucket_policy(full, logical_id)))
        assert {
            "Action": "s3:*",
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            "Effect": "Deny",
            "Principal": {"AWS": "*"},
            "Resource": [
                arn_of(logical_id),
                {"Fn::Join": ["", [arn_of(logical_id), "/*"]]},
            ],
        } in statements, logical_id


def test_data_buckets_use_the_stack_kms_key_and_the_log_bucket_s3_managed_keys(
    full: Synthesized,
) -> None:
    key_id, key = full.only("AWS::KMS::Key")
    assert key["EnableKeyRotation"] is True
    ids = _bucket_ids(full)
    for role in ("Input", "Results", "ModelCache"):
        encryption = full.props(ids[role])["BucketEncryption"]["ServerSideEncryptionConfiguration"]
        assert encryption == [
            {
                "BucketKeyEnabled": True,
                "ServerSideEncryptionByDefault": {
                    "KMSMasterKeyID": arn_of(key_id),
                    "SSEAlgorithm": "aws:kms",
                },
            }
        ], role
    # S3 server access logging cannot deliver into an SSE-KMS bucket.
    log_encryption = full.props(ids["AccessLog"])["BucketEncryption"]
    assert log_encryption == {
        "ServerSideEncryptionConfiguration": [
            {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
        ]
    }


def test_data_buckets_send_access_logs_to_the_log_bucket(full: Synthesized) -> None:
    ids = _bucket_ids(full)
    for role in ("Input", "Results", "ModelCache"):
        logging = full.props(ids[role])["LoggingConfiguration"]
        assert logging["DestinationBucketName"] == ref(ids["AccessLog"]), role
    log_bucket = full.props(ids["AccessLog"])
    assert "LoggingConfiguration" not in log_bucket
    rules = log_bucket["LifecycleConfiguration"]["Rules"]
    assert {"ExpirationInDays": 90, "Id": "expire-access-logs", "Status": "Enabled"} in rules


def test_input_and_model_cache_buckets_are_versioned(full: Synthesized) -> None:
    # The job id derives from the input object's version, so a re-upload is a new job; a
    # replaced model archive stays in the model cache's history, to be seen and rolled back.
    ids = _bucket_ids(full)
    for role in ("Input", "ModelCache"):
        assert full.props(ids[role])["VersioningConfiguration"] == {"Status": "Enabled"}, role
    for role in ("Results", "AccessLog"):
        assert "VersioningConfiguration" not in full.props(ids[role]), role
    rules = full.props(ids["ModelCache"])["LifecycleConfiguration"]["Rules"]
    assert {"NoncurrentVersionExpiration": {"NoncurrentDays": 90}}.items() <= next(
        rule for rule in rules if rule["Id"] == "expire-replaced-models"
    ).items()


def test_results_bucket_expires_intermediates_and_results_by_retention(full: Synthesized) -> None:
    ids = _bucket_ids(full)
    rules = full.props(ids["Results"])["LifecycleConfiguration"]["Rules"]
    expiring = {rule["Prefix"]: rule["ExpirationInDays"] for rule in rules if "Prefix" in rule}
    assert expiring == {
        names.VL_MANIFEST_PREFIX: 14,
        names.VL_OUTPUT_PREFIX: 14,
        names.VL_FAILURE_PREFIX: 14,
        names.WORK_PREFIX: 2,  # a large document's chunks and partials, left by a failed job
        # results, the result cache (results/.cache/) among them: cdk.json's retentionDays
        names.RESULTS_PREFIX: names.DEFAULT_RETENTION_DAYS,
    }
    assert names.RESULT_CACHE_PREFIX.startswith(names.RESULTS_PREFIX)
    (work,) = [rule for rule in rules if rule.get("Prefix") == names.WORK_PREFIX]
    assert work["ExpirationInDays"] == names.WORK_RETENTION_DAYS
    assert all(
        rule.get("AbortIncompleteMultipartUpload") == {"DaysAfterInitiation": 7}
        for rule in rules
        if "Prefix" not in rule
    )


def test_inputs_expire_by_retention_and_replaced_versions_no_later(full: Synthesized) -> None:
    rules = full.props(_bucket_ids(full)["Input"])["LifecycleConfiguration"]["Rules"]
    (retained,) = [rule for rule in rules if rule["Id"] == "retain-inputs"]
    assert retained["ExpirationInDays"] == names.DEFAULT_RETENTION_DAYS
    assert "Prefix" not in retained  # input/ drops and `idp submit`'s uploads/ alike
    (replaced,) = [rule for rule in rules if rule["Id"] == "expire-replaced-inputs"]
    assert replaced["NoncurrentVersionExpiration"]["NoncurrentDays"] <= names.DEFAULT_RETENTION_DAYS


def test_retention_zero_keeps_inputs_and_results(cpu_only: Synthesized) -> None:
    ids = _bucket_ids(cpu_only)
    for role in ("Input", "Results"):
        rules = cpu_only.props(ids[role])["LifecycleConfiguration"]["Rules"]
        assert not [rule for rule in rules if rule["Id"].startswith("retain-")], role


@pytest.mark.parametrize("suffix", names.NOTIFICATION_SUFFIXES)
def test_input_uploads_with_each_suffix_notify_the_job_queue(
    full: Synthesized, suffix: str
) -> None:
    queue_id, _ = full.job_queue()
    full.assertions.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "NotificationConfiguration": {
                "QueueConfigurations": Match.array_with(
                    [
                        {
                            "Event": "s3:ObjectCreated:*",
                            "Filter": {
                                "S3Key": {
                                    "Rules": [
                                        {"Name": "prefix", "Value": names.INPUT_PREFIX},
                                        {"Name": "suffix", "Value": suffix},
                                    ]
                                }
                            },
                            "Queue": arn_of(queue_id),
                        }
                    ]
                )
            }
        },
    )


def test_notifications_are_exactly_one_per_suffix_and_wait_for_the_queue_policy(
    full: Synthesized,
) -> None:
    ids = _bucket_ids(full)
    input_bucket = full.resources[ids["Input"]]
    configurations = input_bucket["Properties"]["NotificationConfiguration"]["QueueConfigurations"]
    suffixes = [c["Filter"]["S3Key"]["Rules"][1]["Value"] for c in configurations]
    assert sorted(suffixes) == sorted(names.NOTIFICATION_SUFFIXES)
    # S3 validates the destination at bucket creation: the queue policy must exist first.
    (policy_id,) = [
        logical_id
        for logical_id, policy in full.of_type("AWS::SQS::QueuePolicy").items()
        if any(
            s.get("Sid") == "AllowInputBucketEvents"
            for s in iter_statements(policy["Properties"]["PolicyDocument"])
        )
    ]
    assert policy_id in input_bucket["DependsOn"]
    for role in ("Results", "ModelCache"):
        assert "NotificationConfiguration" not in full.props(ids[role]), role


def test_s3_may_send_events_into_the_encrypted_queue_from_the_input_bucket_only(
    full: Synthesized,
) -> None:
    _, key = full.only("AWS::KMS::Key")
    input_bucket = {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                ":s3:::paddleidpstack-input-",
                {"Ref": "AWS::AccountId"},
                "-",
                {"Ref": "AWS::Region"},
            ],
        ]
    }
    account = {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}
    assert {
        "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
        "Condition": {"ArnLike": {"aws:SourceArn": [input_bucket]}} | account,
        "Effect": "Allow",
        "Principal": {"Service": "s3.amazonaws.com"},
        "Resource": "*",
        "Sid": "AllowS3ToUseKey",
    } in list(iter_statements(key["KeyPolicy"]))
    # ... the bucket carries that name, and the queue's policy names it too
    ids = _bucket_ids(full)
    assert full.props(ids["Input"])["BucketName"] == {
        "Fn::Join": ["", ["paddleidpstack-input-", *input_bucket["Fn::Join"][1][3:]]]
    }
    full.assertions.has_resource_properties(
        "AWS::SQS::QueuePolicy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Action": "sqs:SendMessage",
                                "Condition": {"ArnEquals": {"aws:SourceArn": input_bucket}}
                                | account,
                                "Principal": {"Service": "s3.amazonaws.com"},
                            }
                        )
                    ]
                )
            }
        },
    )


def test_input_bucket_name_is_lowercase_and_refuses_a_stack_name_too_long_for_it() -> None:
    from infra.storage import input_bucket_name

    assert input_bucket_name("PaddleIdpStack", "123456789012", "ap-southeast-2") == (
        "paddleidpstack-input-123456789012-ap-southeast-2"
    )
    assert len(input_bucket_name("S" * 29, "123456789012", "ap-southeast-2")) == 63
    with pytest.raises(ValueError, match="too long"):
        input_bucket_name("S" * 30, "123456789012", "ap-southeast-2")
