"""The events function's settings, read from its environment (keys in `Env`)."""

from __future__ import annotations

from pydantic import Field

from idp.aws.settings import FunctionSettings
from idp.contract.env.functions import Env
from idp.contract.names import Service


class EventsSettings(FunctionSettings):
    event_bus_name: str = Field(alias=Env.EVENT_BUS_NAME.value, min_length=1)
    service: str = Field(default=Service.EVENTS.value, alias=Env.POWERTOOLS_SERVICE_NAME.value)
