"""The scale-in handler's settings, read from its environment (keys in `Env`)."""

from __future__ import annotations

from pydantic import Field

from idp.aws.settings import FunctionSettings
from idp.contract import names
from idp.contract.env.functions import Env
from idp.contract.names import Service


class ScaleInSettings(FunctionSettings):
    vl_endpoint_name: str = Field(alias=Env.VL_ENDPOINT_NAME.value, min_length=1)
    vl_variant_name: str = Field(default=names.VL_VARIANT_NAME, alias=Env.VL_VARIANT_NAME.value)
    service: str = Field(default=Service.SCALE_IN.value, alias=Env.POWERTOOLS_SERVICE_NAME.value)
