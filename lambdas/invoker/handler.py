"""Invoker Lambda entry point: an SQS batch → `JobRouter`, with partial batch responses.

Clients, settings and the router are built once per container, on the first invocation
(`functools.cache`), never at import. Tests build a `JobRouter` directly with their own clients.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse

from idp.aws.alarms import AlarmRearm
from idp.aws.clients import client, dynamodb_table
from idp.aws.endpoint import EndpointCapacity
from idp.contract.errors import InvalidMessage
from idp.contract.names import Service
from idp.contract.producers import ProducerPrefixes
from idp.flow.lambda_invoke import LambdaProcessorInvoker
from idp.jobstore.store import JobStore
from lambdas.invoker.dispatch import VlEndpointDispatcher
from lambdas.invoker.routing import JobRouter
from lambdas.invoker.settings import InvokerSettings

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger(service=Service.INVOKER.value)
# A failed record is reported in batchItemFailures even when it is the whole batch, so the
# function itself succeeds and SQS retries only what failed.
batch_processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


@cache
def job_router() -> JobRouter:
    config = InvokerSettings.from_env()
    vl: VlEndpointDispatcher | None = None
    if config.vl_enabled and config.vl_endpoint_name:
        vl = VlEndpointDispatcher(
            capacity=EndpointCapacity(
                client("sagemaker"),
                endpoint_name=config.vl_endpoint_name,
                variant_name=config.vl_variant_name,
            ),
            scale_in_alarm=(
                AlarmRearm(client("cloudwatch"), alarm_name=config.vl_scale_in_alarm_name)
                if config.vl_scale_in_alarm_name
                else None
            ),
        )
    return JobRouter(
        s3=client("s3"),
        store=JobStore(dynamodb_table(config.jobs_table), retention_days=config.retention_days),
        processor=LambdaProcessorInvoker(client("lambda"), function_name=config.processor_function),
        vl=vl,
        max_input_bytes=config.max_input_bytes,
        dispatch_lease_seconds=config.dispatch_lease_seconds,
        producers=ProducerPrefixes.from_json(config.producer_prefixes),
        telemetry=config.telemetry(),
        logger=logger,
    )


def process_batch(
    event: dict[str, Any], context: LambdaContext, router: JobRouter
) -> PartialItemFailureResponse:
    """Run every SQS record through `router`; failed records come back in batchItemFailures."""

    def handle_record(record: SQSRecord) -> None:
        # Raising makes the record a batch item failure: retried, then dead-lettered.
        receive_count = record.attributes.approximate_receive_count
        with logger.append_context_keys(message_id=record.message_id, receive_count=receive_count):
            try:
                outcomes = router.handle_message(record.body, sender=record.attributes.sender_id)
            except InvalidMessage as error:
                logger.error(
                    "message names no job; it is retried and then dead-lettered",
                    extra={"error_code": error.code, "reason": error.message},
                )
                raise
            for outcome in outcomes:
                logger.info(
                    "job handled",
                    extra={
                        "job_id": outcome.job_id,
                        "disposition": outcome.disposition.value,
                        "error_code": outcome.error_code,
                    },
                )

    return process_partial_response(
        event=event, record_handler=handle_record, processor=batch_processor, context=context
    )


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_batch(event, context, job_router())
