"""The sweeper's settings, read from its environment (keys in `Env`)."""

from __future__ import annotations

from pydantic import Field

from idp.aws.settings import FunctionSettings
from idp.contract.env.functions import Env
from idp.contract.names import Service
from idp.contract.topology import STALE_PROCESSING_SECONDS, STALE_QUEUED_SECONDS


class SweeperSettings(FunctionSettings):
    jobs_table: str = Field(alias=Env.JOBS_TABLE.value, min_length=1)
    stale_processing_seconds: float = Field(
        default=STALE_PROCESSING_SECONDS, alias=Env.STALE_PROCESSING_SECONDS.value, gt=0
    )
    stale_queued_seconds: float = Field(
        default=STALE_QUEUED_SECONDS, alias=Env.STALE_QUEUED_SECONDS.value, gt=0
    )
    service: str = Field(default=Service.SWEEPER.value, alias=Env.POWERTOOLS_SERVICE_NAME.value)
