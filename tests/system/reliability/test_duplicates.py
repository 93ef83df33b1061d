"""Duplicate deliveries on the local pipeline: one job record and one OCR run per job.

SQS and S3 notifications deliver at least once. Each test makes one message arrive more than once
and then checks the job record (one record, COMPLETED, attempts == 1) and the number of times the
invoker started the processor for it (`RuntimeStats.processor_events`, the Lambda async invokes).

The local runtime runs the invoker in one execution environment, so deliveries reach the handler
one after another (in one batch or in consecutive batches), never truly in parallel. The
embedded emulator answers DynamoDB requests one at a time besides
(tests/devkit/local/test_emulator.py), so a conditional write holds as in DynamoDB.
"""

from __future__ import annotations

import json
import time
from urllib.parse import quote_plus

import pytest

from idp.contract import names
from idp.contract.job_record import JobRecord
from idp.contract.topology import Function
from tests.local_runs import wait_for
from tests.system.reliability.conftest import (
    VISIBILITY_TIMEOUT_S,
    Reliability,
    good_page_png,
)

pytestmark = pytest.mark.ocr

HANDLED_TIMEOUT_S = 60.0


def _s3_event(reliability: Reliability, key: str) -> str:
    """The S3 ObjectCreated notification for `key`, built as the emulator's S3 sends it."""
    bucket = reliability.resources.input_bucket
    head = reliability.s3.head_object(Bucket=bucket, Key=key)
    return json.dumps(
        {
            "Records": [
                {
                    "eventVersion": "2.1",
                    "eventSource": "aws:s3",
                    "awsRegion": reliability.resources.region,
                    "eventTime": "2026-11-21T12:00:00.000Z",
                    "eventName": "ObjectCreated:Put",
                    "s3": {
                        "s3SchemaVersion": "1.0",
                        "configurationId": "redelivered",
                        "bucket": {"name": bucket, "arn": f"arn:aws:s3:::{bucket}"},
                        "object": {
                            "key": quote_plus(key),
                            "size": head["ContentLength"],
                            "eTag": head["ETag"].strip('"'),
                        },
                    },
                }
            ]
        }
    )


def _jobs_for_key(reliability: Reliability, key: str) -> list[JobRecord]:
    return [job for job in reliability.client.jobs() if job.get("input_key") == key]


def _wait_handled(reliability: Reliability) -> None:
    """Until the invoker has received and deleted every message sent so far."""
    wait_for(reliability.queue_drained, timeout_s=HANDLED_TIMEOUT_S, what="the queue to drain")


def _assert_one_run(reliability: Reliability, job_id: str, text: str) -> None:
    record = reliability.wait_terminal([job_id])[job_id]
    _wait_handled(reliability)
    reliability.assert_completed_once(record, text)


def test_same_s3_event_delivered_twice_runs_once(reliability: Reliability) -> None:
    # GIVEN a page uploaded under input/PP-OCRv5/, which S3 announces on the job queue
    text = "Delivered twice by S3, processed once."
    key = "input/PP-OCRv5/duplicates/s3 event twice.png"
    reliability.put_input(key, good_page_png(text))
    wait_for(lambda: bool(_jobs_for_key(reliability, key)), timeout_s=60, what="the job")
    (job,) = _jobs_for_key(reliability, key)
    job_id = job[names.JOB_ID_ATTR]

    # WHEN the same notification is delivered again while the job is in flight
    reliability.send(_s3_event(reliability, key))

    # THEN there is one job record for the object and the processor ran once
    _assert_one_run(reliability, job_id, text)
    assert [j[names.JOB_ID_ATTR] for j in _jobs_for_key(reliability, key)] == [job_id]


def test_message_redelivered_after_visibility_timeout_runs_once(
    reliability: Reliability,
) -> None:
    # GIVEN a direct job message that the invoker has already dispatched
    text = "Redelivered after the visibility timeout."
    key = "uploads/duplicates/redelivered.png"
    reliability.put_input(key, good_page_png(text))
    body = reliability.direct_message(key, job_id="dup-redelivered")
    reliability.send(body)
    wait_for(
        lambda: bool(
            (job := reliability.client.job("dup-redelivered")) and job.get("dispatch_target")
        ),
        timeout_s=60,
        what="the first delivery to dispatch",
    )

    # WHEN SQS hands the same body to the invoker again once the visibility timeout has passed
    # (as when the first consumer died before deleting it), and again after the job completed
    time.sleep(VISIBILITY_TIMEOUT_S)
    reliability.send(body)
    reliability.wait_terminal(["dup-redelivered"])
    time.sleep(VISIBILITY_TIMEOUT_S)
    reliability.send(body)

    # THEN one record, one OCR run, and the terminal status is not regressed
    _assert_one_run(reliability, "dup-redelivered", text)
    assert len(_jobs_for_key(reliability, key)) == 1


def test_two_concurrent_deliveries_of_one_message_run_once(reliability: Reliability) -> None:
    # GIVEN a direct job message
    text = "Two deliveries arrived in the same batch."
    key = "uploads/duplicates/concurrent.png"
    reliability.put_input(key, good_page_png(text))
    body = json.dumps(reliability.direct_message(key, job_id="dup-concurrent"))
    invoker_runs_before = reliability.runtime.stats.invocations[Function.INVOKER]

    # WHEN two copies arrive at the same moment (one send, so they share an invoker batch)
    reliability.sqs.send_message_batch(
        QueueUrl=reliability.resources.queue_url,
        Entries=[{"Id": "first", "MessageBody": body}, {"Id": "second", "MessageBody": body}],
    )

    # THEN one record, one OCR run
    _assert_one_run(reliability, "dup-concurrent", text)
    assert len(_jobs_for_key(reliability, key)) == 1
    # (both copies were handled: by one batch, or by two when the poller got one first)
    assert reliability.runtime.stats.invocations[Function.INVOKER] - invoker_runs_before in (1, 2)
