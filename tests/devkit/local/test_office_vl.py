"""A PaddleOCR-VL job on an Office document through the whole local pipeline: the processor has
it converted, then sends the converted PDF to the endpoint as a chunk (the endpoint never reads
the DOCX). A module of its own: the embedded AWS keeps its state per process, so this pipeline
must not run beside another module's."""

from __future__ import annotations

from pathlib import Path

import pytest

from devkit.textmetrics import character_error_rate
from idp.contract.names import MediaType, OcrModel
from tests.local_runs import JOB_TIMEOUT_S, completed_result, running_vl_pipeline
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.ocr


def test_a_paddleocr_vl_job_on_a_docx_reads_its_converted_pages_at_the_endpoint(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN the demo letter as a DOCX, and the VL endpoint (substitute engine) at 0 instances
    docx = tmp_path / "letter.docx"
    docx.write_bytes((REPO_ROOT / "samples" / "sample-letter.docx").read_bytes())
    truth = (REPO_ROOT / "samples" / "sample-letter.txt").read_text(encoding="utf-8")
    with running_vl_pipeline(tmp_path / "work", models_dir) as pipeline:
        # WHEN it is submitted for PaddleOCR-VL
        result = completed_result(
            pipeline.client(), docx, model=OcrModel.PADDLEOCR_VL, timeout_s=JOB_TIMEOUT_S
        )

    # THEN it completed: the endpoint read the converted PDF's two pages (as a chunk: never the
    # DOCX), and the result names the DOCX and its conversion
    assert result["source"]["media_type"] == MediaType.DOCX.value
    assert result["source"]["conversion"]["converter"] == "LibreOffice"
    assert len(result["pages"]) == 2
    read = "\n".join(line["text"] for page in result["pages"] for line in page["lines"])
    assert character_error_rate(" ".join(truth.split()), " ".join(read.split())) <= 0.05
