"""One job-finished event per status-table stream record that ends a job.

The stream carries every change of a job's record once; only the change that made it COMPLETED
or FAILED (`finishes_job`) becomes an event. A record whose event could not be put is reported
as a batch item failure, so the event source mapping retries it (and the records after it on
its shard) and, after its retries, sends it to the failure queue: an event is never dropped in
silence. A retry can deliver an event twice; `event_id` is the same for both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from idp.contract.events import EVENT_SOURCE, JOB_FINISHED, JobFinished, finishes_job
from idp.contract.job_record import JobRecord
from idp.jobstore.job_table import from_dynamo

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
    from mypy_boto3_events import EventBridgeClient


class EventPublishError(RuntimeError):
    """EventBridge refused the event (the record is retried by the event source mapping)."""


def job_finished(record: DynamoDBRecord) -> JobFinished | None:
    """The event this stream record calls for, or None (not the change that ended a job)."""
    change = record.dynamodb
    if change is None:
        return None
    old, new = _image(change.old_image), _image(change.new_image)
    if new is None or not finishes_job(old, new):
        return None
    return JobFinished.from_record(new)


def _image(image: dict[str, Any] | None) -> JobRecord | None:
    return from_dynamo(image) if image else None


class JobEventPublisher:
    def __init__(self, events: EventBridgeClient, *, bus_name: str) -> None:
        self.events = events
        self.bus_name = bus_name

    def publish(self, record: DynamoDBRecord) -> JobFinished | None:
        """Put the record's event on the bus (if it calls for one); what was put."""
        event = job_finished(record)
        if event is None:
            return None
        response = self.events.put_events(
            Entries=[
                {
                    "EventBusName": self.bus_name,
                    "Source": EVENT_SOURCE,
                    "DetailType": JOB_FINISHED,
                    "Detail": event.model_dump_json(),
                    "Resources": [r for r in (event.result_uri, event.input_uri) if r],
                }
            ]
        )
        if response.get("FailedEntryCount", 0):
            entry = response["Entries"][0]
            raise EventPublishError(
                f"job {event.job_id}: {entry.get('ErrorCode')} {entry.get('ErrorMessage')}"
            )
        return event
