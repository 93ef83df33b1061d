"""The completion handler's settings, read from its environment (keys in `names.Env`)."""

from __future__ import annotations

from pydantic import Field

from idp.aws.settings import FunctionSettings
from idp.names import Env, Service


class CompletionSettings(FunctionSettings):
    jobs_table: str = Field(alias=Env.JOBS_TABLE.value, min_length=1)
    results_bucket: str = Field(alias=Env.RESULTS_BUCKET.value, min_length=1)
    # The OCR processor writes a completed PaddleOCR-VL job's result.pdf (None: no result.pdf).
    processor_function: str | None = Field(default=None, alias=Env.PROCESSOR_FUNCTION.value)
    service: str = Field(default=Service.COMPLETION.value, alias=Env.POWERTOOLS_SERVICE_NAME.value)
