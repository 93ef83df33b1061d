"""The sweeper's settings, read from its environment (keys in `names.Env`)."""

from __future__ import annotations

from pydantic import Field

from idp.aws.settings import FunctionSettings
from idp.contract import names
from idp.contract.names import Env, Service


class SweeperSettings(FunctionSettings):
    jobs_table: str = Field(alias=Env.JOBS_TABLE.value, min_length=1)
    stale_processing_seconds: float = Field(
        default=names.STALE_PROCESSING_SECONDS, alias=Env.STALE_PROCESSING_SECONDS.value, gt=0
    )
    stale_queued_seconds: float = Field(
        default=names.STALE_QUEUED_SECONDS, alias=Env.STALE_QUEUED_SECONDS.value, gt=0
    )
    service: str = Field(default=Service.SWEEPER.value, alias=Env.POWERTOOLS_SERVICE_NAME.value)
