"""The completion handler's settings, read from its environment (keys in `Env`)."""

from __future__ import annotations

from pydantic import Field

from idp.aws.settings import FunctionSettings
from idp.contract.env.functions import Env
from idp.contract.names import Service


class CompletionSettings(FunctionSettings):
    jobs_table: str = Field(alias=Env.JOBS_TABLE.value, min_length=1)
    results_bucket: str = Field(alias=Env.RESULTS_BUCKET.value, min_length=1)
    # The OCR processor, which finishes a PaddleOCR-VL job from the endpoint's output.
    processor_function: str = Field(alias=Env.PROCESSOR_FUNCTION.value, min_length=1)
    service: str = Field(default=Service.COMPLETION.value, alias=Env.POWERTOOLS_SERVICE_NAME.value)
