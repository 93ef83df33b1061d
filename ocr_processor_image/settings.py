"""The OCR processor's settings, read once per container from its environment."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from idp import names
from idp.names import Env, ProcessorEnv


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class ProcessorSettings:
    jobs_table: str
    results_bucket: str
    model_cache_bucket: str | None = None
    max_pages: int = names.DEFAULT_MAX_PAGES
    max_input_bytes: int = names.DEFAULT_MAX_INPUT_BYTES
    allow_hub_download: bool = False
    models_dir: Path | None = None  # model dirs baked into the image (read-only)
    models_root: Path = field(default_factory=lambda: Path(tempfile.gettempdir()) / "idp-models")
    cpu_threads: int = 2
    # A document with more pages is fanned out in chunks of this many pages (0: never).
    chunk_pages: int = names.DEFAULT_CHUNK_PAGES
    # This function's own name (Lambda sets AWS_LAMBDA_FUNCTION_NAME): chunks invoke it.
    function_name: str | None = None
    # The PaddleOCR-VL endpoint this function submits VL jobs to (None: VL disabled).
    vl_endpoint_name: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ProcessorSettings:
        env = os.environ if env is None else env
        models_dir = env.get(ProcessorEnv.MODELS_DIR)
        defaults = cls(jobs_table="", results_bucket="")
        return cls(
            jobs_table=env[Env.JOBS_TABLE],
            results_bucket=env[Env.RESULTS_BUCKET],
            model_cache_bucket=env.get(Env.MODEL_CACHE_BUCKET) or None,
            max_pages=int(env.get(Env.MAX_PAGES) or names.DEFAULT_MAX_PAGES),
            max_input_bytes=int(env.get(Env.MAX_INPUT_BYTES) or names.DEFAULT_MAX_INPUT_BYTES),
            allow_hub_download=_flag(env.get(Env.ALLOW_HUB_DOWNLOAD)),
            models_dir=Path(models_dir) if models_dir else None,
            cpu_threads=int(env.get(ProcessorEnv.CPU_THREADS) or defaults.cpu_threads),
            chunk_pages=int(env.get(Env.CHUNK_PAGES) or names.DEFAULT_CHUNK_PAGES),
            function_name=env.get("AWS_LAMBDA_FUNCTION_NAME") or None,
            vl_endpoint_name=env.get(Env.VL_ENDPOINT_NAME) or None,
        )
