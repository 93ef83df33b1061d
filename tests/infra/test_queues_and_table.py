"""The job queue and its DLQ, the async failure queue, and the job status table."""

from __future__ import annotations

from idp.contract import names
from idp.contract.topology import (
    INVOKER_TIMEOUT_SECONDS,
    QUEUE_MAX_RECEIVE_COUNT,
    QUEUE_VISIBILITY_TIMEOUT_SECONDS,
)
from tests.infra.support import Synthesized, arn_of, iter_statements


def _dead_letter_targets(synth: Synthesized) -> set[str]:
    """Queues that something else dead-letters into (queue redrive, Lambda DLQ, SNS redrive,
    event bus)."""
    targets: set[str] = set()
    for resource in synth.resources.values():
        props = resource.get("Properties", {})
        for holder in (props.get("RedrivePolicy"), props.get("DeadLetterConfig")):
            if holder:
                target = (
                    holder.get("deadLetterTargetArn")
                    or holder.get("TargetArn")
                    or holder.get("Arn")  # an event bus's dead-letter queue
                )
                targets.add(target["Fn::GetAtt"][0])
    return targets


def test_job_queue_dead_letters_after_the_configured_receives(full: Synthesized) -> None:
    _, queue = full.job_queue()
    (dlq_id,) = _dead_letter_targets(full) & {
        queue["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
    }
    assert queue["RedrivePolicy"] == {
        "deadLetterTargetArn": arn_of(dlq_id),
        "maxReceiveCount": QUEUE_MAX_RECEIVE_COUNT,
    }
    assert 3 <= QUEUE_MAX_RECEIVE_COUNT <= 5


def test_job_queue_visibility_covers_six_invoker_timeouts(full: Synthesized) -> None:
    _, queue = full.job_queue()
    assert queue["VisibilityTimeout"] == QUEUE_VISIBILITY_TIMEOUT_SECONDS
    assert queue["VisibilityTimeout"] >= 6 * INVOKER_TIMEOUT_SECONDS


def test_every_queue_is_kms_encrypted_and_tls_only(full: Synthesized) -> None:
    key_id, _ = full.only("AWS::KMS::Key")
    queues = full.of_type("AWS::SQS::Queue")
    assert len(queues) == 3  # job queue, its DLQ, async failures
    tls_only_queues = {
        queue["Ref"]
        for policy in full.of_type("AWS::SQS::QueuePolicy").values()
        for queue in policy["Properties"]["Queues"]
        if any(
            s["Effect"] == "Deny"
            and s["Action"] == "sqs:*"
            and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
            for s in iter_statements(policy["Properties"]["PolicyDocument"])
        )
    }
    for logical_id, queue in queues.items():
        assert queue["Properties"]["KmsMasterKeyId"] == arn_of(key_id), logical_id
        assert logical_id in tls_only_queues


def test_every_queue_has_a_dead_letter_queue_unless_it_is_one(full: Synthesized) -> None:
    dead_letter_queues = _dead_letter_targets(full)
    assert len(dead_letter_queues) == 2
    for logical_id, queue in full.of_type("AWS::SQS::Queue").items():
        if logical_id not in dead_letter_queues:
            assert "RedrivePolicy" in queue["Properties"], logical_id


def test_status_table_is_on_demand_recoverable_and_encrypted(full: Synthesized) -> None:
    key_id, _ = full.only("AWS::KMS::Key")
    table_id, table = full.only("AWS::DynamoDB::Table")
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert table["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert table["SSESpecification"] == {
        "KMSMasterKeyId": arn_of(key_id),
        "SSEEnabled": True,
        "SSEType": "KMS",
    }
    assert table["KeySchema"] == [{"AttributeName": names.JOB_ID_ATTR, "KeyType": "HASH"}]
    assert full.resources[table_id]["DeletionPolicy"] == "Retain"
    # records expire by their own date (the invoker writes it from retentionDays)
    assert table["TimeToLiveSpecification"] == {
        "AttributeName": names.EXPIRES_AT_ATTR,
        "Enabled": True,
    }


def test_status_table_lists_jobs_by_status_and_creation_time(full: Synthesized) -> None:
    _, table = full.only("AWS::DynamoDB::Table")
    assert table["GlobalSecondaryIndexes"] == [
        {
            "IndexName": names.STATUS_INDEX,
            "KeySchema": [
                {"AttributeName": names.STATUS_INDEX_PK, "KeyType": "HASH"},
                {"AttributeName": names.STATUS_INDEX_SK, "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }
    ]
    assert {"AttributeName": names.STATUS_INDEX_SK, "AttributeType": "S"} in table[
        "AttributeDefinitions"
    ]
