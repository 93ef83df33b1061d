"""A running local pipeline (embedded AWS + runtime), shared by the tests of this folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from devkit.local.pipeline import LocalPipeline
from tests.local_runs import running_pipeline


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Iterator[LocalPipeline]:
    work_dir = tmp_path_factory.mktemp("local-pipeline")
    with running_pipeline(
        work_dir, models_dir, vl_substitute=True, alarm_period_seconds=0.5
    ) as running:
        yield running
