"""A long PaddleOCR-VL document through the whole local pipeline, as one inference per chunk.

A module of its own: the embedded AWS keeps its state per process, so this pipeline (5-page
chunks, a slow idle alarm) must not run beside another module's pipeline.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from devkit.textmetrics import character_error_rate
from idp.contract import names
from idp.contract.names import JobStatus, OcrModel
from tests.local_runs import JOB_TIMEOUT_S, page_text, running_vl_pipeline, write_long_pdf
from tests.pdftext import pdf_text, read_pages

pytestmark = pytest.mark.ocr


def test_a_long_vl_document_goes_to_the_endpoint_in_chunks_served_together(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN a 23-page PDF (different text on every page), 5-page chunks, and the VL endpoint
    # (substitute engine) at 0 instances
    document = tmp_path / "long-vl.pdf"
    texts = write_long_pdf(document, 23)
    with running_vl_pipeline(tmp_path / "work", models_dir, chunk_pages=5) as pipeline:
        assert pipeline.runtime is not None
        client = pipeline.client()

        # WHEN it is submitted for PaddleOCR-VL
        submitted = client.submit(document, model=OcrModel.PADDLEOCR_VL)
        record = client.wait([submitted.job_id], timeout_s=JOB_TIMEOUT_S)[submitted.job_id]
        result = client.result_document(submitted.job_id)
        peak = pipeline.runtime.vl.peak_in_flight
        # result.pdf comes from the processor, asked by the merge, shortly after
        out = tmp_path / "out"
        deadline = time.monotonic() + 120
        while True:
            result_pdf = client.download_result(submitted.job_id, out).parent / names.RESULT_PDF
            if result_pdf.exists() or time.monotonic() > deadline:
                break
            time.sleep(1)
        left = pipeline.endpoint.client("s3").list_objects_v2(
            Bucket=pipeline.resources.results_bucket if pipeline.resources else "",
            Prefix=f"{names.WORK_PREFIX}{submitted.job_id}/",
        )

    # THEN it ran as 5 inferences, several at once on the one instance, and merged in order
    assert record is not None
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    assert (record["chunks_total"], record["chunks_done"], record["pages_done"]) == (5, 5, 23)
    assert peak >= 2
    assert [page["page"] for page in result["pages"]] == list(range(1, 24))
    for number, text in enumerate(texts, start=1):
        assert character_error_rate(text, page_text(result, number)) <= 0.05, number
    assert result["engine"]["substitute"] is True
    # AND result.pdf holds the 23 pages with their text, as for a CPU job
    assert len(read_pages(result_pdf)) == 23
    for number in (1, 12, 23):
        extracted = " ".join(pdf_text(result_pdf, number).split())
        assert character_error_rate(" ".join(texts[number - 1].split()), extracted) <= 0.05
    # AND its chunk PDFs and partials are gone
    assert left.get("KeyCount") == 0
