"""Stopping the local runtime stops its emulated services, retries included."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from devkit.local.faults import Faults
from devkit.synthetic import encode, render_page
from idp.contract.names import OcrModel
from tests.local_runs import running_pipeline, wait_for

pytestmark = pytest.mark.ocr


def test_stopping_drops_the_async_retries_still_waiting(tmp_path: Path, models_dir: Path) -> None:
    # GIVEN a processor whose environment dies on every attempt, and Lambda's retry waiting a
    # minute before the next attempt
    page = tmp_path / "page.png"
    page.write_bytes(encode(render_page(["Stop me"], size=(400, 80), margin=20), "PNG"))
    with running_pipeline(
        tmp_path / "work",
        models_dir,
        vl_enabled=False,
        async_retry_delay_seconds=60,
        faults=Faults(processor_crashes=3),
        quiet_functions=True,
    ) as pipeline:
        runtime = pipeline.runtime
        assert runtime is not None
        pipeline.client().submit(page, model=OcrModel.PP_OCRV5)
        crashes = runtime.lambda_faults.processor_crashes
        wait_for(lambda: crashes.fired > 0, timeout_s=120, what="the first attempt to crash")
        assert crashes.fired == 1
        time.sleep(1.0)  # the first attempt has failed: its retry is waiting

        # WHEN the runtime stops during that wait
    # THEN the retries were dropped, not run at once against a stopping runtime
    assert runtime.stats.invocations["OcrProcessor"] == 1
    assert runtime.lambda_faults.processor_crashes.fired == 1
