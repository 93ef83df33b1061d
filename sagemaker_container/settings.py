"""Typed settings of the VL inference container, read once from the environment at start-up."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from idp import names
from idp.names import Env, VlEnv

DEFAULT_MODELS_DIR: Final = Path("/opt/vl-models")  # baked by the Dockerfile
DEFAULT_PIPELINE_VERSION: Final = names.VL_DEFAULT_PIPELINE_VERSION
DEFAULT_SERVER_PORT: Final = 8118
ENGINES: Final = (names.VL_ENGINE_PADDLEOCR_VL, names.VL_ENGINE_SUBSTITUTE_PPOCRV5)
_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off", ""})


class SettingsError(ValueError):
    """An environment variable holds a value the container cannot run with."""


@dataclass(frozen=True)
class VlmServerSettings:
    """The vLLM server the container starts and supervises (PaddleOCR-VL engine only)."""

    url: str | None = None  # an external server: nothing is started when set
    command: tuple[str, ...] = ("vllm",)
    port: int = DEFAULT_SERVER_PORT
    gpu_memory_utilization: float = 0.5
    max_num_seqs: int = 128
    extra_args: tuple[str, ...] = ()
    startup_timeout_s: float = 900.0
    max_restarts: int = 3


@dataclass(frozen=True)
class ServerSettings:
    """Everything the server reads from the environment, with SageMaker-friendly defaults."""

    engine: str = names.VL_ENGINE_PADDLEOCR_VL
    host: str = "0.0.0.0"  # noqa: S104 - the container's port is what SageMaker calls
    port: int = names.VL_CONTAINER_PORT
    # Requests processed at once; SageMaker's async endpoint sends at most this many anyway.
    max_concurrent_requests: int = names.VL_MAX_CONCURRENT_INVOCATIONS
    # Below SageMaker's invocation timeout, so this server's 504 (with its reason) ends the job.
    request_timeout_s: float = float(names.VL_REQUEST_TIMEOUT_SECONDS)
    # Independent engine instances (each a layout model + VLM client); a request holds one for
    # its whole document, so PaddleOCR-VL gets one per concurrent request.
    engine_instances: int = names.VL_MAX_CONCURRENT_INVOCATIONS
    models_dir: Path = DEFAULT_MODELS_DIR
    substitute_models_dir: Path | None = None
    model_cache_bucket: str | None = None
    allow_hub_download: bool = False
    pipeline_version: str = DEFAULT_PIPELINE_VERSION
    region_concurrency: int = 64
    # Pages of one document in flight together (their regions share the VLM queue); also
    # how many rasterized pages a request holds in memory at once.
    page_batch: int = 4
    device: str = "gpu:0"
    max_pages: int = names.VL_MAX_PAGES
    max_input_bytes: int = names.DEFAULT_MAX_INPUT_BYTES
    warmup: bool = True
    vlm_server: VlmServerSettings = field(default_factory=VlmServerSettings)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServerSettings:
        env = os.environ if environ is None else environ
        engine = env.get(VlEnv.ENGINE, names.VL_ENGINE_PADDLEOCR_VL).strip().lower()
        if engine not in ENGINES:
            raise SettingsError(f"{VlEnv.ENGINE}={engine!r}: use one of {', '.join(ENGINES)}")
        max_concurrent = _int(
            env, VlEnv.MAX_CONCURRENT_REQUESTS, names.VL_MAX_CONCURRENT_INVOCATIONS, minimum=1
        )
        # One PaddleOCR-VL instance per concurrent request, or requests queue for an instance
        # while the GPU idles. The CPU substitute gains nothing from a second copy.
        default_instances = max_concurrent if engine == names.VL_ENGINE_PADDLEOCR_VL else 1
        request_timeout_s = _float(
            env, VlEnv.REQUEST_TIMEOUT_SECONDS, float(names.VL_REQUEST_TIMEOUT_SECONDS)
        )
        if request_timeout_s >= names.VL_INVOCATION_TIMEOUT_SECONDS:
            raise SettingsError(
                f"{VlEnv.REQUEST_TIMEOUT_SECONDS}={request_timeout_s:g} must be below the "
                f"invocation timeout ({names.VL_INVOCATION_TIMEOUT_SECONDS} s), or SageMaker "
                "times the request out before this server can report why"
            )
        substitute_dir = env.get(names.ProcessorEnv.MODELS_DIR)
        server = VlmServerSettings(
            url=env.get(VlEnv.SERVER_URL) or None,
            command=tuple(shlex.split(env.get(VlEnv.SERVER_COMMAND, "vllm"))),
            port=_int(env, VlEnv.SERVER_PORT, DEFAULT_SERVER_PORT, minimum=1),
            gpu_memory_utilization=_float(env, VlEnv.SERVER_GPU_MEMORY_UTILIZATION, 0.5),
            max_num_seqs=_int(env, VlEnv.SERVER_MAX_NUM_SEQS, 128, minimum=1),
            extra_args=tuple(shlex.split(env.get(VlEnv.SERVER_EXTRA_ARGS, ""))),
            startup_timeout_s=_float(env, VlEnv.SERVER_STARTUP_TIMEOUT_SECONDS, 900.0),
            max_restarts=_int(env, VlEnv.SERVER_MAX_RESTARTS, 3, minimum=0),
        )
        if not server.command:
            raise SettingsError(f"{VlEnv.SERVER_COMMAND} must name an executable")
        return cls(
            engine=engine,
            host=env.get(VlEnv.HOST, "0.0.0.0"),  # noqa: S104
            port=_int(env, VlEnv.PORT, names.VL_CONTAINER_PORT, minimum=0),
            max_concurrent_requests=max_concurrent,
            request_timeout_s=request_timeout_s,
            engine_instances=_int(env, VlEnv.ENGINE_INSTANCES, default_instances, minimum=1),
            models_dir=Path(env.get(VlEnv.MODELS_DIR, str(DEFAULT_MODELS_DIR))),
            substitute_models_dir=Path(substitute_dir) if substitute_dir else None,
            model_cache_bucket=env.get(Env.MODEL_CACHE_BUCKET) or None,
            allow_hub_download=_bool(env, Env.ALLOW_HUB_DOWNLOAD, default=False),
            pipeline_version=env.get(VlEnv.PIPELINE_VERSION, DEFAULT_PIPELINE_VERSION),
            region_concurrency=_int(env, VlEnv.REGION_CONCURRENCY, 64, minimum=1),
            page_batch=_int(env, VlEnv.PAGE_BATCH, 4, minimum=1),
            device=env.get(VlEnv.DEVICE, "gpu:0"),
            max_pages=_int(env, Env.MAX_PAGES, names.VL_MAX_PAGES, minimum=1),
            max_input_bytes=_int(
                env, Env.MAX_INPUT_BYTES, names.DEFAULT_MAX_INPUT_BYTES, minimum=1
            ),
            warmup=_bool(env, VlEnv.WARMUP, default=True),
            vlm_server=server,
        )


def _int(env: Mapping[str, str], key: str, default: int, *, minimum: int) -> int:
    raw = env.get(key)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{key}={raw!r} is not an integer") from None
    if value < minimum:
        raise SettingsError(f"{key}={value} must be at least {minimum}")
    return value


def _float(env: Mapping[str, str], key: str, default: float) -> float:
    raw = env.get(key)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{key}={raw!r} is not a number") from None
    if value <= 0:
        raise SettingsError(f"{key}={value} must be positive")
    return value


def _bool(env: Mapping[str, str], key: str, *, default: bool) -> bool:
    raw = env.get(key)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{key}={raw!r} is not a boolean (true/false)")
