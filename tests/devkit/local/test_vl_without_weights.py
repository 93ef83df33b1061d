"""PaddleOCR-VL locally without its weights: the job must end FAILED with MODEL_UNAVAILABLE."""

from __future__ import annotations

from pathlib import Path

import pytest

from devkit.synthetic import encode, render_page, sample_lines
from idp.contract.names import JobStatus, OcrModel
from tests.local_runs import running_pipeline


@pytest.mark.ocr
def test_vl_job_without_weights_fails_with_model_unavailable(tmp_path: Path) -> None:
    # GIVEN a local pipeline whose VL endpoint must find real PaddleOCR-VL weights (none here)
    page = tmp_path / "page.png"
    page.write_bytes(
        encode(render_page(sample_lines(2), size=(1400, 170), font_size=28, margin=40), "PNG")
    )
    with running_pipeline(tmp_path / "work", None, vl_substitute=False) as pipeline:
        client = pipeline.client()

        # WHEN a PaddleOCR-VL job is submitted
        submitted = client.submit(page, model=OcrModel.PADDLEOCR_VL)
        record = client.wait([submitted.job_id], timeout_s=240)[submitted.job_id]

    # THEN the endpoint scaled out, its container reported the missing weights, and the job
    # ended FAILED through the error topic with a message naming the missing model
    assert record is not None
    assert record["status"] == JobStatus.FAILED
    assert record["error"]["code"] == "MODEL_UNAVAILABLE"
    assert "PaddleOCR-VL" in record["error"]["message"]
