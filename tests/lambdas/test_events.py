"""The events function on emulated AWS: the status table's real stream records of a job's life,
handed to the handler as Lambda's event source mapping hands them, become exactly one event per
job that ended (per delivery: a redelivered batch carries the same `event_id`); a refused
PutEvents fails the record, so that it is retried, never dropped."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError

from devkit.local.emulator import AwsEndpoint, EmbeddedAws
from devkit.local.stream_source import passes_filter
from idp.contract.env.functions import Env
from idp.contract.errors import UnsupportedMediaType
from idp.contract.events import EVENT_SOURCE, JOB_FINISHED, JobFinished, event_id
from idp.jobstore.store import JobStore, jobs_table_definition
from lambdas.events import handler as events_handler
from tests.job_records import create_queued_job, create_refused_job

TABLE = "jobs"
BUS = "job-events"


class Account:
    """The jobs table (with its stream) and a bus whose rule feeds a queue, on the emulator
    (moto's in-process mock has no DynamoDB Streams API; its server has)."""

    def __init__(self, endpoint: AwsEndpoint) -> None:
        self.dynamodb = endpoint.client("dynamodb")
        self.streams = endpoint.client("dynamodbstreams")
        self.sqs = endpoint.client("sqs")
        events = endpoint.client("events")
        table = self.dynamodb.create_table(**jobs_table_definition(TABLE))["TableDescription"]
        self.stream_arn = table["LatestStreamArn"]
        self.store = JobStore(endpoint.resource("dynamodb").Table(TABLE))
        events.create_event_bus(Name=BUS)
        self.queue_url = self.sqs.create_queue(QueueName="received")["QueueUrl"]
        queue_arn = self.sqs.get_queue_attributes(
            QueueUrl=self.queue_url, AttributeNames=["QueueArn"]
        )["Attributes"]["QueueArn"]
        events.put_rule(
            Name="all", EventBusName=BUS, EventPattern=json.dumps({"source": [EVENT_SOURCE]})
        )
        events.put_targets(Rule="all", EventBusName=BUS, Targets=[{"Id": "q", "Arn": queue_arn}])

    def stream_records(self) -> list[dict[str, Any]]:
        """Every record of the table's stream so far, as Lambda delivers them."""
        (shard,) = self.streams.describe_stream(StreamArn=self.stream_arn)["StreamDescription"][
            "Shards"
        ]
        iterator = self.streams.get_shard_iterator(
            StreamArn=self.stream_arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        records = self.streams.get_records(ShardIterator=iterator)["Records"]
        return [
            {
                "eventID": r["eventID"],
                "eventName": r["eventName"],
                "eventSource": "aws:dynamodb",
                "dynamodb": {
                    k: v for k, v in r["dynamodb"].items() if k != "ApproximateCreationDateTime"
                },
            }
            for r in records
        ]

    def received(self) -> list[dict[str, Any]]:
        messages = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10)
        return [json.loads(m["Body"]) for m in messages.get("Messages", [])]


@pytest.fixture
def emulator() -> Iterator[AwsEndpoint]:
    with EmbeddedAws() as aws:
        yield aws.endpoint


@pytest.fixture
def account(emulator: AwsEndpoint, monkeypatch: pytest.MonkeyPatch) -> Iterator[Account]:
    """A fresh table and bus; the handler's clients reach the emulator, as in the local run."""
    for key, value in emulator.process_env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv(Env.EVENT_BUS_NAME.value, BUS)
    events_handler.publisher.cache_clear()
    yield Account(emulator)
    events_handler.publisher.cache_clear()


def test_a_jobs_whole_life_on_the_stream_publishes_one_event(
    account: Account, lambda_context: Any
) -> None:
    # GIVEN a job created, processed, completed, then touched again once terminal (a write the
    # stack's filter passes, as its new image is terminal), and a job refused at admission
    store = account.store
    create_queued_job(store, "job-a", input_key="input/PP-OCRv5/job-a.png")
    store.mark_processing("job-a")
    assert store.mark_completed(
        "job-a",
        result_uri="s3://r/results/job-a/result.json",
        page_count=2,
        timings_ms={"total": 5.0},
    )
    account.dynamodb.update_item(
        TableName=TABLE,
        Key={"job_id": {"S": "job-a"}},
        UpdateExpression="SET note = :n",
        ExpressionAttributeValues={":n": {"S": "later"}},
    )
    create_refused_job(
        store, "job-b", UnsupportedMediaType("not a document"), input_key="input/PP-OCRv5/b.txt"
    )
    records = account.stream_records()

    # WHEN the stack's filter passes its records to the handler, as one batch and then again
    # (a retried batch)
    passed = [r for r in records if passes_filter(r)]
    assert len(records) == 5
    assert len(passed) == 3
    for _ in range(2):
        response = events_handler.lambda_handler({"Records": passed}, lambda_context)
        assert response == {"batchItemFailures": []}

    # THEN each job has its event once per delivery, with one idempotency key per transition
    events = account.received()
    assert sorted(e["detail"]["job_id"] for e in events) == ["job-a", "job-a", "job-b", "job-b"]
    completed = JobFinished.model_validate(
        next(e["detail"] for e in events if e["detail"]["job_id"] == "job-a")
    )
    record = store.get("job-a")
    assert record is not None
    assert completed.status == "COMPLETED"
    assert completed.pages == 2
    assert completed.event_id == event_id("job-a", "COMPLETED", record["finished_at"])
    assert len({e["detail"]["event_id"] for e in events}) == 2
    assert {e["detail-type"] for e in events} == {JOB_FINISHED}
    refused = next(e["detail"] for e in events if e["detail"]["job_id"] == "job-b")
    assert refused["error"]["code"] == UnsupportedMediaType.code


def test_a_refused_put_fails_the_batch_so_that_it_is_retried(
    account: Account, lambda_context: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a completed job, and a bus name that does not exist
    create_queued_job(account.store, "job-c", input_key="input/PP-OCRv5/job-c.png")
    account.store.mark_completed("job-c", result_uri="s3://r/x", page_count=1, timings_ms={})
    passed = [r for r in account.stream_records() if passes_filter(r)]
    monkeypatch.setenv(Env.EVENT_BUS_NAME.value, "no-such-bus")
    events_handler.publisher.cache_clear()

    # WHEN the handler gets its record
    # THEN the invocation fails (every record of the batch failed: the mapping retries the
    # batch, then sends it to the failure queue), and nothing was received
    with pytest.raises(BatchProcessingError, match="no-such-bus"):
        events_handler.lambda_handler({"Records": passed}, lambda_context)
    assert account.received() == []
