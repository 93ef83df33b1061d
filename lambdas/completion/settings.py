"""The completion handler's settings, read from its environment (keys in `names.Env`)."""

from __future__ import annotations

from pydantic import Field

from idp import names
from idp.aws.settings import EnvSettings
from idp.names import Env, Service


class CompletionSettings(EnvSettings):
    jobs_table: str = Field(alias=Env.JOBS_TABLE.value, min_length=1)
    results_bucket: str = Field(alias=Env.RESULTS_BUCKET.value, min_length=1)
    # The OCR processor writes a completed PaddleOCR-VL job's result.pdf (None: no result.pdf).
    processor_function: str | None = Field(default=None, alias=Env.PROCESSOR_FUNCTION.value)
    metrics_namespace: str = Field(
        default=names.METRICS_NAMESPACE, alias=Env.POWERTOOLS_METRICS_NAMESPACE.value
    )
    service: str = Field(default=Service.COMPLETION.value, alias=Env.POWERTOOLS_SERVICE_NAME.value)
