"""Jobs belong to who sent them: every job records its sender's principal id, and with
producer prefixes configured a producer may have only keys under its own prefixes read."""

from __future__ import annotations

import json
from typing import Any

import pytest

from idp.contract.errors import KeyNotAllowed
from idp.contract.names import JobStatus
from idp.contract.producers import ProducerPrefixes
from lambdas.invoker.handler import process_batch
from lambdas.invoker.routing import Disposition
from tests.lambdas.support import (
    INPUT_BUCKET,
    EmulatedAws,
    RecordingProcessorInvoker,
    RouterFactory,
    s3_event_body,
    sqs_event,
)

TEAM_A = "AROAEXAMPLETEAMA"  # a role's unique id: its sessions send as AROA…:<session>
TEAM_B = "AROAEXAMPLETEAMB"
PREFIXES = ProducerPrefixes({TEAM_A: ("uploads/team-a/",), TEAM_B: ("uploads/team-b/",)})


def _direct(key: str, **fields: Any) -> str:
    return json.dumps({"bucket": INPUT_BUCKET, "key": key, "model": "PP-OCRv5", **fields})


def test_a_direct_job_records_its_sender_whatever_the_message_claims(
    aws: EmulatedAws, make_router: RouterFactory
) -> None:
    aws.put_input("uploads/team-a/invoice.pdf")
    message = _direct("uploads/team-a/invoice.pdf", owner="somebody-else")

    [outcome] = make_router().handle_message(message, sender=f"{TEAM_A}:alice")

    assert aws.job(outcome.job_id)["owner"] == f"{TEAM_A}:alice"


def test_an_s3_event_job_records_its_uploader(aws: EmulatedAws, make_router: RouterFactory) -> None:
    key = "input/PP-OCRv5/scan.pdf"
    version = aws.put_input(key)
    body = json.loads(s3_event_body(key, version=version))
    body["Records"][0]["userIdentity"] = {"principalId": f"AWS:{TEAM_B}:bob"}

    [outcome] = make_router().handle_message(json.dumps(body), sender="AIDAS3SERVICE")

    assert aws.job(outcome.job_id)["owner"] == f"{TEAM_B}:bob"


def test_an_s3_event_that_names_no_uploader_still_makes_a_job_with_no_owner(
    aws: EmulatedAws, make_router: RouterFactory
) -> None:
    # GIVEN an S3 event without `userIdentity`, as an emulator's notification comes
    key = "input/PP-OCRv5/scan.pdf"
    version = aws.put_input(key)
    body = json.loads(s3_event_body(key, version=version))
    body["Records"][0].pop("userIdentity", None)

    # WHEN the invoker reads it
    [outcome] = make_router().handle_message(json.dumps(body))

    # THEN the job is dispatched and records no owner rather than a made-up one
    assert outcome.disposition is Disposition.DISPATCHED
    assert "owner" not in aws.job(outcome.job_id)


def test_one_trust_domain_by_default_any_sender_may_name_any_key(
    aws: EmulatedAws, make_router: RouterFactory
) -> None:
    aws.put_input("uploads/team-b/payroll.pdf")
    [outcome] = make_router().handle_message(
        _direct("uploads/team-b/payroll.pdf"), sender=f"{TEAM_A}:alice"
    )
    assert outcome.disposition is Disposition.DISPATCHED


def test_producer_a_cannot_have_bs_upload_read(
    aws: EmulatedAws, make_router: RouterFactory, processor_runs: RecordingProcessorInvoker
) -> None:
    # GIVEN team B's upload, and producer prefixes for both teams
    aws.put_input("uploads/team-b/payroll.pdf")
    router = make_router(producers=PREFIXES)

    # WHEN a session of team A's role names B's key
    [outcome] = router.handle_message(
        _direct("uploads/team-b/payroll.pdf"), sender=f"{TEAM_A}:alice"
    )

    # THEN the job ends FAILED KEY_NOT_ALLOWED, owned by A, and nothing read B's file
    job = aws.job(outcome.job_id)
    assert outcome.disposition is Disposition.REJECTED
    assert job["status"] == JobStatus.FAILED
    assert job["error"]["code"] == KeyNotAllowed.code
    assert "uploads/team-a/" in job["error"]["message"]
    assert job["owner"] == f"{TEAM_A}:alice"
    assert processor_runs.events == []


def test_a_producer_reads_its_own_keys_and_an_unknown_sender_none(
    aws: EmulatedAws, make_router: RouterFactory
) -> None:
    aws.put_input("uploads/team-a/invoice.pdf")
    router = make_router(producers=PREFIXES)

    [own] = router.handle_message(_direct("uploads/team-a/invoice.pdf"), sender=f"{TEAM_A}:x")
    [stranger] = router.handle_message(
        _direct("uploads/team-a/invoice.pdf", job_id="stranger-1"), sender="AIDASTRANGER"
    )

    assert own.disposition is Disposition.DISPATCHED
    assert stranger.disposition is Disposition.REJECTED
    assert stranger.error_code == KeyNotAllowed.code


def test_the_handler_takes_the_sender_from_the_sqs_record(
    aws: EmulatedAws, make_router: RouterFactory, lambda_context: Any
) -> None:
    aws.put_input("uploads/team-a/invoice.pdf")
    event = sqs_event(_direct("uploads/team-a/invoice.pdf", job_id="from-sqs-1"))
    event["Records"][0]["attributes"]["SenderId"] = f"{TEAM_A}:alice"

    process_batch(event, lambda_context, make_router(producers=PREFIXES))

    assert aws.job("from-sqs-1")["owner"] == f"{TEAM_A}:alice"


@pytest.mark.parametrize(
    ("text", "problem"),
    [('["uploads/"]', "map principal ids"), ('{"AROAX": []}', "must be key prefixes")],
)
def test_a_malformed_mapping_is_refused(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        ProducerPrefixes.from_json(text)
