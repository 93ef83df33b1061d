"""Events function entry point: a batch of status-table stream records → job-finished events,
with partial batch responses (Powertools' batch processor for DynamoDB streams)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)

from idp.aws.clients import client
from idp.contract.names import Service
from lambdas.events.publisher import JobEventPublisher
from lambdas.events.settings import EventsSettings

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
    from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger(service=Service.EVENTS.value)
processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


@cache
def publisher() -> JobEventPublisher:
    config = EventsSettings.from_env()
    return JobEventPublisher(client("events"), bus_name=config.event_bus_name)


def publish_record(record: DynamoDBRecord) -> None:
    event = publisher().publish(record)
    if event is not None:
        logger.info("job %s %s: event %s", event.job_id, event.status, event.event_id)


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(
        event=event, record_handler=publish_record, processor=processor, context=context
    )
