"""The converter function's settings, read from its environment (keys in `Env`)."""

from __future__ import annotations

from pydantic import Field

from idp.aws.settings import FunctionSettings
from idp.contract import names, topology
from idp.contract.env.functions import Env
from idp.contract.names import Service


class ConverterSettings(FunctionSettings):
    max_input_bytes: int = Field(
        default=names.DEFAULT_MAX_INPUT_BYTES, alias=Env.MAX_INPUT_BYTES.value, gt=0
    )
    time_limit_seconds: float = Field(
        default=topology.CONVERSION_TIME_LIMIT_SECONDS,
        alias=Env.CONVERSION_TIME_LIMIT.value,
        gt=0,
    )
    service: str = Field(default=Service.CONVERTER.value, alias=Env.POWERTOOLS_SERVICE_NAME.value)
