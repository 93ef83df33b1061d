"""What the image tests share: the local run with a function run from its container image, and
the containers of an image that stay up between jobs (Lambda's warm environment)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from devkit.local.pipeline import LocalPipeline
from tests.local_runs import running_pipeline


@contextmanager
def image_pipeline(
    tmp_path_factory: pytest.TempPathFactory, models_dir: Path, **knobs: Any
) -> Iterator[LocalPipeline]:
    """The local run, CPU only and quiet, with the function its `knobs` name run from its image
    (`processor_image=…`, `converter_image=…`). `models_dir` seeds the S3 model cache, which
    the image fetches from."""
    with running_pipeline(
        tmp_path_factory.mktemp("image-run"),
        models_dir,
        vl_enabled=False,
        quiet_functions=True,
        **knobs,
    ) as pipeline:
        yield pipeline


def running_containers(image: str) -> list[str]:
    """The names of the containers of `image` that are running."""
    listed = subprocess.run(
        ["docker", "ps", "--filter", f"ancestor={image}", "--format", "{{.Names}}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return listed.stdout.split()
