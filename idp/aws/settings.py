"""Function settings: a small pydantic model per function, read from the environment per call."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Self

from pydantic import BaseModel, ConfigDict, Field

from idp.aws.telemetry import Telemetry
from idp.contract import names
from idp.contract.env.functions import Env


class EnvSettings(BaseModel):
    """Base for settings whose field aliases are the `Env` keys.

    `from_env` reads the environment when called (never at import), so a test or the local
    runtime sets variables first and the function picks them up on its next cold start.
    Empty values count as unset, so a stack may pass "" for an unused optional setting.
    """

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        source = os.environ if environ is None else environ
        aliases = {field.alias or name for name, field in cls.model_fields.items()}
        return cls.model_validate({k: v for k, v in source.items() if k in aliases and v != ""})


class FunctionSettings(EnvSettings):
    """What every zip function reads besides its own settings: where its metrics go.

    A subclass gives `service` its function's name as the default.
    """

    metrics_namespace: str = Field(
        default=names.METRICS_NAMESPACE, alias=Env.POWERTOOLS_METRICS_NAMESPACE.value
    )
    service: str = Field(alias=Env.POWERTOOLS_SERVICE_NAME.value)

    def telemetry(self) -> Telemetry:
        return Telemetry(namespace=self.metrics_namespace, service=self.service)
