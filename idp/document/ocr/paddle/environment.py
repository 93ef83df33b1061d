"""The process environment paddleocr/paddlex run in: writable caches, no hub checks, no model
without its local directory, their log level, and a faster parser for model configs."""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from idp.contract.errors import ModelUnavailable


def prepare_paddle_environment(tmp_root: Path | None = None) -> None:
    """Point PaddleX's caches at a writable place and skip hub connectivity checks.

    Must run before paddleocr/paddlex is first imported (they read these at import).
    """
    root = tmp_root or Path(os.environ.get("TMPDIR", "/tmp"))  # noqa: S108
    os.environ.setdefault("PADDLE_PDX_CACHE_HOME", str(root / "paddlex"))
    os.environ.setdefault("PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK", "True")
    home = os.environ.get("HOME")
    if not home or not os.access(home, os.W_OK):
        os.environ["HOME"] = str(root)
    # Paddle warns at import that no ccache is installed: it would build C++ extensions, which
    # the pipeline never does, and the line only confuses a reader of the logs.
    warnings.filterwarnings("ignore", message="No ccache found", category=UserWarning)


def match_paddlex_log_level() -> None:
    """Let PaddleX log at the function's level (POWERTOOLS_LOG_LEVEL, default INFO).

    PaddleX sets its own logger to INFO when imported, so its coloured "Creating model" lines
    would appear even where the function itself logs warnings only (a quiet local run).
    """
    level = logging.getLevelName(os.environ.get("POWERTOOLS_LOG_LEVEL", "INFO").upper())
    if isinstance(level, int):
        logging.getLogger("paddlex").setLevel(level)


_yaml_patched = False


def use_libyaml_for_model_configs() -> None:
    """Parse model configs (inference.yml) with libyaml's FullLoader instead of pure Python.

    PaddleX reads each model's inference.yml with PyYAML's pure-Python FullLoader; the
    recognition model's file carries its 18k-entry character dictionary and takes ~0.6 s to
    parse (more than once per engine). The C loader builds the same objects ~10× faster.
    """
    global _yaml_patched  # noqa: PLW0603 - patch the library once per process
    if _yaml_patched:
        return
    import yaml  # type: ignore[import-untyped]
    from paddlex.inference.utils.io import readers

    backend = getattr(readers, "YAMLReaderBackend", None)
    loader = getattr(yaml, "CFullLoader", None)
    if backend is None or loader is None:  # another paddlex layout, or PyYAML without libyaml
        return

    def read_file(self: Any, in_path: str, **kwargs: Any) -> Any:
        with open(in_path, encoding="utf-8", **kwargs) as handle:
            return yaml.load(handle, Loader=loader)  # noqa: S506 - FullLoader, as PaddleX uses

    backend.read_file = read_file
    _yaml_patched = True


# A hook that builds one model: PaddleX's own `create_model`, its pipeline, the model's config.
ModelHook = Callable[..., Any]


@contextmanager
def creating_models_with(hook: ModelHook) -> Iterator[None]:
    """While the block runs, PaddleX builds every pipeline's models through
    `hook(original, pipeline, config, **kwargs)`; PaddleX's own method is put back after."""
    from paddlex.inference.pipelines.base import BasePipeline

    original: Callable[..., Any] = BasePipeline.create_model

    def create_model(pipeline: Any, config: Mapping[str, Any], **kwargs: Any) -> Any:
        return hook(original, pipeline, config, **kwargs)

    BasePipeline.create_model = create_model
    try:
        yield
    finally:
        BasePipeline.create_model = original


def _refuse_hub_models(
    original: ModelHook, pipeline: Any, config: Mapping[str, Any], **kwargs: Any
) -> Any:
    if not config.get("model_dir") and not _served(config):
        name = config.get("model_name") or "(unnamed)"
        raise ModelUnavailable(
            f"model {name} has no local directory, so PaddleX would download it from its "
            "hub unpinned; refused. Pin it with `idp models sync --model NAME`."
        )
    return original(pipeline, config, **kwargs)


def _served(config: Mapping[str, Any]) -> bool:
    """Whether the model runs on a server PaddleX calls (PaddleOCR-VL's VLM on vLLM): its
    weights are the server's, and PaddleX loads nothing for it."""
    from paddlex.inference.models.common.genai import uses_server_backend

    return bool(uses_server_backend(config.get("genai_config")))


def only_local_models() -> AbstractContextManager[None]:
    """While a pipeline is built, every model PaddleX creates must come with its `model_dir`:
    without one PaddleX would download the official model, unpinned, from its hub. Our model
    cache resolves (and verifies) every directory first, so such a call is refused, naming it;
    a model a server runs (a VLM on vLLM) needs none."""
    return creating_models_with(_refuse_hub_models)
