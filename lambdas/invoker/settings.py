"""The invoker's settings, read from its environment (keys in `Env`)."""

from __future__ import annotations

from pydantic import Field, model_validator

from idp.aws.settings import FunctionSettings
from idp.contract import names
from idp.contract.env.functions import Env
from idp.contract.names import Service
from idp.contract.topology import DISPATCH_LEASE_SECONDS


class InvokerSettings(FunctionSettings):
    jobs_table: str = Field(alias=Env.JOBS_TABLE.value, min_length=1)
    processor_function: str = Field(alias=Env.PROCESSOR_FUNCTION.value, min_length=1)
    vl_enabled: bool = Field(default=False, alias=Env.VL_ENABLED.value)
    vl_endpoint_name: str | None = Field(default=None, alias=Env.VL_ENDPOINT_NAME.value)
    vl_variant_name: str = Field(default=names.VL_VARIANT_NAME, alias=Env.VL_VARIANT_NAME.value)
    vl_scale_in_alarm_name: str | None = Field(default=None, alias=Env.VL_SCALE_IN_ALARM_NAME.value)
    max_input_bytes: int = Field(
        default=names.DEFAULT_MAX_INPUT_BYTES, gt=0, alias=Env.MAX_INPUT_BYTES.value
    )
    dispatch_lease_seconds: int = Field(
        default=DISPATCH_LEASE_SECONDS, gt=0, alias=Env.DISPATCH_LEASE_SECONDS.value
    )
    retention_days: int = Field(
        default=names.DEFAULT_RETENTION_DAYS, ge=0, alias=Env.RETENTION_DAYS.value
    )
    # JSON: each producer's principal id → the input key prefixes it may name ("": one domain).
    producer_prefixes: str = Field(default="", alias=Env.PRODUCER_PREFIXES.value)
    service: str = Field(default=Service.INVOKER.value, alias=Env.POWERTOOLS_SERVICE_NAME.value)

    @model_validator(mode="after")
    def _vl_needs_endpoint(self) -> InvokerSettings:
        if self.vl_enabled and not self.vl_endpoint_name:
            raise ValueError(
                f"{Env.VL_ENABLED.value} is true but {Env.VL_ENDPOINT_NAME.value} is not set"
            )
        return self
