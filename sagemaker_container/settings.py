"""Typed settings of the VL inference container, read once from the environment at start-up."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Self

from pydantic import Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from idp.aws.settings import EnvSettings
from idp.contract import names
from idp.contract.env.functions import Env
from idp.contract.env.processor import ProcessorEnv
from idp.contract.env.vl import (
    VL_CONTAINER_PORT,
    VL_ENGINE_PADDLEOCR_VL,
    VL_ENGINE_SUBSTITUTE_PPOCRV5,
    VlEnv,
)
from idp.document.ocr.models.catalogue import VL_DEFAULT_PIPELINE_VERSION

DEFAULT_MODELS_DIR: Final = Path("/opt/vl-models")  # baked by the Dockerfile
DEFAULT_PIPELINE_VERSION: Final = VL_DEFAULT_PIPELINE_VERSION
DEFAULT_SERVER_PORT: Final = 8118
ENGINES: Final = (VL_ENGINE_PADDLEOCR_VL, VL_ENGINE_SUBSTITUTE_PPOCRV5)
_NOT_A: Final = {
    "int_parsing": "is not an integer",
    "float_parsing": "is not a number",
    "bool_parsing": "is not a boolean (true/false)",
}


class SettingsError(ValueError):
    """An environment variable holds a value the container cannot run with."""


def _refusal(error: ErrorDetails) -> str:
    """One validation error as `VARIABLE=value` and what is wrong with it."""
    key = ".".join(str(part) for part in error["loc"])
    raw, context = error.get("input"), error.get("ctx", {})
    if error["type"] == "value_error":
        return str(context["error"])
    if error["type"] in _NOT_A:
        return f"{key}={raw!r} {_NOT_A[error['type']]}"
    if error["type"] == "greater_than_equal":
        return f"{key}={raw} must be at least {context['ge']}"
    if error["type"] == "greater_than":
        return f"{key}={raw} must be positive"
    return f"{key}={raw!r}: {error['msg']}"


class _ContainerSettings(EnvSettings):
    """Settings whose refusals are SettingsError, naming the variable and its value."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        try:
            return super().from_env(environ)
        except ValidationError as exc:
            raise SettingsError(_refusal(exc.errors()[0])) from None


class VlmServerSettings(_ContainerSettings):
    """The vLLM server the container starts and supervises (PaddleOCR-VL engine only)."""

    url: str | None = Field(default=None, alias=VlEnv.SERVER_URL.value)  # external: none started
    command: tuple[str, ...] = Field(default=("vllm",), alias=VlEnv.SERVER_COMMAND.value)
    port: int = Field(default=DEFAULT_SERVER_PORT, ge=1, alias=VlEnv.SERVER_PORT.value)
    gpu_memory_utilization: float = Field(
        default=0.5, gt=0, alias=VlEnv.SERVER_GPU_MEMORY_UTILIZATION.value
    )
    max_num_seqs: int = Field(default=128, ge=1, alias=VlEnv.SERVER_MAX_NUM_SEQS.value)
    extra_args: tuple[str, ...] = Field(default=(), alias=VlEnv.SERVER_EXTRA_ARGS.value)
    startup_timeout_s: float = Field(
        default=900.0, gt=0, alias=VlEnv.SERVER_STARTUP_TIMEOUT_SECONDS.value
    )
    max_restarts: int = Field(default=3, ge=0, alias=VlEnv.SERVER_MAX_RESTARTS.value)

    @field_validator("command", "extra_args", mode="before")
    @classmethod
    def _split_command_line(cls, value: Any) -> Any:
        return tuple(shlex.split(value)) if isinstance(value, str) else value

    @field_validator("command")
    @classmethod
    def _names_an_executable(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError(f"{VlEnv.SERVER_COMMAND} must name an executable")
        return value


class ServerSettings(_ContainerSettings):
    """Everything the server reads from the environment, with SageMaker-friendly defaults."""

    engine: str = Field(default=VL_ENGINE_PADDLEOCR_VL, alias=VlEnv.ENGINE.value)
    host: str = Field(default="0.0.0.0", alias=VlEnv.HOST.value)  # noqa: S104 - SageMaker calls it
    port: int = Field(default=VL_CONTAINER_PORT, ge=0, alias=VlEnv.PORT.value)
    # Requests processed at once; SageMaker's async endpoint sends at most this many anyway.
    max_concurrent_requests: int = Field(
        default=names.VL_MAX_CONCURRENT_INVOCATIONS,
        ge=1,
        alias=VlEnv.MAX_CONCURRENT_REQUESTS.value,
    )
    # Below SageMaker's invocation timeout, so this server's 504 (with its reason) ends the job.
    request_timeout_s: float = Field(
        default=float(names.VL_REQUEST_TIMEOUT_SECONDS),
        gt=0,
        alias=VlEnv.REQUEST_TIMEOUT_SECONDS.value,
    )
    # Set: that many engine instances; unset: see `engine_instances`.
    configured_engine_instances: int | None = Field(
        default=None, ge=1, alias=VlEnv.ENGINE_INSTANCES.value
    )
    models_dir: Path = Field(default=DEFAULT_MODELS_DIR, alias=VlEnv.MODELS_DIR.value)
    substitute_models_dir: Path | None = Field(default=None, alias=ProcessorEnv.MODELS_DIR.value)
    model_cache_bucket: str | None = Field(default=None, alias=Env.MODEL_CACHE_BUCKET.value)
    allow_hub_download: bool = Field(default=False, alias=Env.ALLOW_HUB_DOWNLOAD.value)
    pipeline_version: str = Field(
        default=DEFAULT_PIPELINE_VERSION, alias=VlEnv.PIPELINE_VERSION.value
    )
    region_concurrency: int = Field(default=64, ge=1, alias=VlEnv.REGION_CONCURRENCY.value)
    # Pages of one document in flight together (their regions share the VLM queue); also
    # how many rasterized pages a request holds in memory at once.
    page_batch: int = Field(default=4, ge=1, alias=VlEnv.PAGE_BATCH.value)
    device: str = Field(default="gpu:0", alias=VlEnv.DEVICE.value)
    max_pages: int = Field(default=names.VL_MAX_PAGES, ge=1, alias=Env.MAX_PAGES.value)
    max_input_bytes: int = Field(
        default=names.DEFAULT_MAX_INPUT_BYTES, ge=1, alias=Env.MAX_INPUT_BYTES.value
    )
    warmup: bool = Field(default=True, alias=VlEnv.WARMUP.value)
    vlm_server: VlmServerSettings = Field(default_factory=VlmServerSettings)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        settings = super().from_env(environ)
        return settings.model_copy(update={"vlm_server": VlmServerSettings.from_env(environ)})

    @field_validator("engine", mode="before")
    @classmethod
    def _known_engine(cls, value: Any) -> Any:
        engine = str(value).strip().lower()
        if engine not in ENGINES:
            raise ValueError(f"{VlEnv.ENGINE}={engine!r}: use one of {', '.join(ENGINES)}")
        return engine

    @field_validator("request_timeout_s")
    @classmethod
    def _below_invocation_timeout(cls, value: float) -> float:
        if value >= names.VL_INVOCATION_TIMEOUT_SECONDS:
            raise ValueError(
                f"{VlEnv.REQUEST_TIMEOUT_SECONDS}={value:g} must be below the invocation "
                f"timeout ({names.VL_INVOCATION_TIMEOUT_SECONDS} s), or SageMaker times the "
                "request out before this server can report why"
            )
        return value

    @property
    def engine_instances(self) -> int:
        """Independent engine instances (each a layout model + VLM client); a request holds one
        for its whole document. Unless set: one PaddleOCR-VL instance per concurrent request, or
        requests queue for an instance while the GPU idles; the CPU substitute gains nothing
        from a second copy."""
        if self.configured_engine_instances is not None:
            return self.configured_engine_instances
        if self.engine == VL_ENGINE_PADDLEOCR_VL:
            return self.max_concurrent_requests
        return 1
