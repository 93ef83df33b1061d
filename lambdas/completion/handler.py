"""Completion handler entry point: SNS records → `CompletionRecorder`.

Subscribed to the VL success and error topics; the error topic also carries the OCR processor's
on-failure destination records. An AWS error propagates, so Lambda's asynchronous retries
deliver the notification again (the recorder tolerates the duplicates that this creates).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from idp.aws.clients import client, dynamodb_table
from idp.aws.sns import each_message
from idp.contract.names import Service
from idp.flow.lambda_invoke import LambdaProcessorInvoker
from idp.jobstore.store import JobStore
from lambdas.completion.recorder import CompletionRecorder
from lambdas.completion.settings import CompletionSettings

logger = Logger(service=Service.COMPLETION.value)


@cache
def completion_recorder() -> CompletionRecorder:
    config = CompletionSettings.from_env()
    return CompletionRecorder(
        s3=client("s3"),
        store=JobStore(dynamodb_table(config.jobs_table)),
        results_bucket=config.results_bucket,
        telemetry=config.telemetry(),
        logger=logger,
        processor=LambdaProcessorInvoker(client("lambda"), function_name=config.processor_function),
    )


def handle_event(event: dict[str, Any], recorder: CompletionRecorder) -> dict[str, Any]:
    """Every SNS record of the event, in order; returns what happened to each job."""
    return {"outcomes": each_message(event, recorder.handle_message)}


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle_event(event, completion_recorder())
