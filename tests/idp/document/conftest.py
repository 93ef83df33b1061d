"""What the document tests share: a registry of warm engines over the offline weights."""

from __future__ import annotations

from pathlib import Path

import pytest

from idp.document.ocr.models.cache import ModelCache
from idp.document.ocr.registry import EngineRegistry
from idp.document.ocr.settings import EngineSettings


@pytest.fixture(scope="module")
def registry(models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> EngineRegistry:
    """Engines built on first use from the offline weights, two threads each, per module."""
    cache = ModelCache(
        local_root=tmp_path_factory.mktemp("models"),
        search_roots=[models_dir],
    )
    return EngineRegistry(resolve=cache.fetch, settings=EngineSettings(cpu_threads=2))
