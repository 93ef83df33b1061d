"""Born-digital PDFs through the whole local pipeline: layer pages exact, scans OCR'd, in order.

The processor fans the 6-page document out in chunks of 4 pages, so the text layer is read in
the chunk workers and the merge, not only in a single invocation.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devkit.local.pipeline import LocalPipeline
from devkit.synthetic_pdf import born_digital_pdf, fine_print, garbled, mixed_pages, page_lines
from devkit.textmetrics import character_error_rate
from idp.contract.job_record import JobRecord
from idp.contract.jobs import JobOptions
from idp.contract.names import JobStatus, OcrModel, TextLayerMode
from tests.local_runs import JOB_TIMEOUT_S, running_pipeline

pytestmark = pytest.mark.ocr


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Iterator[LocalPipeline]:
    with running_pipeline(
        tmp_path_factory.mktemp("text-layer"),
        models_dir,
        vl_enabled=False,
        processor_concurrency=2,
        chunk_pages=4,
        quiet_functions=True,
    ) as running:
        yield running


@pytest.fixture(scope="module")
def mixed_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("docs") / "mixed.pdf"
    path.write_bytes(born_digital_pdf(mixed_pages()))
    return path


def _run(pipeline: LocalPipeline, path: Path, mode: TextLayerMode) -> tuple[JobRecord, Any]:
    client = pipeline.client()
    options = JobOptions(text_layer=mode)
    submitted = client.submit(path, model=OcrModel.PP_OCRV5, options=options)
    record = client.wait([submitted.job_id], timeout_s=JOB_TIMEOUT_S)[submitted.job_id]
    assert record is not None
    return record, client


def test_a_mixed_pdf_reads_its_layer_pages_exactly_and_ocrs_its_scans(
    pipeline: LocalPipeline, mixed_pdf: Path
) -> None:
    # GIVEN a PDF of vector pages (one with 2.5 pt fine print), a scan between two vector
    # pages, a scan under an invisible garbled OCR layer, ligatures and a rotated page
    # WHEN it runs with the default text_layer "auto"
    record, client = _run(pipeline, mixed_pdf, TextLayerMode.AUTO)

    # THEN the job completed in chunks, pages in order, and each page says where its text came from
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    assert record["chunks_total"] == 2
    result = client.result_document(record["job_id"])
    pages = result["pages"]
    assert [p["page"] for p in pages] == [1, 2, 3, 4, 5, 6]
    assert [p["text_source"] for p in pages] == [
        "text_layer",
        "ocr",
        "text_layer",
        "ocr",
        "text_layer",
        "text_layer",
    ]
    # AND born-digital pages carry their exact text, fine print included
    specs = mixed_pages()

    def text(page: dict[str, Any]) -> str:
        return "\n".join(line["text"] for line in page["lines"])

    for number in (1, 3, 5, 6):
        assert text(pages[number - 1]) == specs[number - 1].text
    assert fine_print(3) in text(pages[2])
    # AND the scans were OCR'd from their pixels, not from the garbled invisible layer
    assert character_error_rate(specs[1].text, text(pages[1])) < 0.05
    assert character_error_rate(specs[3].text, text(pages[3])) < 0.05
    assert garbled(page_lines(4, 6))[1] not in text(pages[3])


def test_only_fails_the_job_on_a_scanned_page(pipeline: LocalPipeline, mixed_pdf: Path) -> None:
    # WHEN the mixed PDF runs with text_layer "only"
    record, _ = _run(pipeline, mixed_pdf, TextLayerMode.ONLY)

    # THEN it ends FAILED with NO_TEXT_LAYER naming the scanned page
    assert record["status"] == JobStatus.FAILED
    assert record["error"]["code"] == "NO_TEXT_LAYER"
    assert "page 2" in record["error"]["message"]


def test_ocr_mode_ocrs_every_page(pipeline: LocalPipeline, tmp_path: Path) -> None:
    # GIVEN a one-page vector PDF
    path = tmp_path / "vector.pdf"
    path.write_bytes(born_digital_pdf(mixed_pages()[:1]))

    # WHEN it runs with text_layer "ocr"
    record, client = _run(pipeline, path, TextLayerMode.OCR)

    # THEN the page was OCR'd (the fine print, too small to read, is what OCR misses)
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    page = client.result_document(record["job_id"])["pages"][0]
    assert page["text_source"] == "ocr"
    assert page["lines"]
