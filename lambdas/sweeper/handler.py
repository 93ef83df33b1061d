"""Sweeper entry point: a scheduled event → `StaleJobSweeper.sweep`."""

from __future__ import annotations

from dataclasses import asdict
from datetime import timedelta
from functools import cache
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from idp.aws.clients import dynamodb_table
from idp.contract.names import JobStatus, Service
from idp.jobstore.store import JobStore
from lambdas.sweeper.settings import SweeperSettings
from lambdas.sweeper.sweep import StaleJobSweeper

logger = Logger(service=Service.SWEEPER.value)


@cache
def sweeper() -> StaleJobSweeper:
    config = SweeperSettings.from_env()
    return StaleJobSweeper(
        store=JobStore(dynamodb_table(config.jobs_table)),
        stale_after={
            JobStatus.PROCESSING: timedelta(seconds=config.stale_processing_seconds),
            JobStatus.QUEUED: timedelta(seconds=config.stale_queued_seconds),
        },
        telemetry=config.telemetry(),
        logger=logger,
    )


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return asdict(sweeper().sweep())
