"""result.pdf from the processor (real PP-OCRv5 engine) and from a chunked job's merge, read
back with poppler."""

from __future__ import annotations

from pathlib import Path

import pytest
from pypdf import PdfReader

from devkit import synthetic
from devkit.textmetrics import character_error_rate
from idp.contract import names
from idp.contract.jobs import DispatchedJob, JobOptions
from idp.contract.names import JobStatus
from idp.contract.results import Line, OcrResult, PageResult, results_prefix
from idp.flow.chunks.plan import searchable_part_key
from ocr_processor_image.result_pdf import merge_searchable_parts, upload_searchable_pdf
from tests.pdftext import assert_words_in_boxes, pdf_text, read_pages
from tests.processor_account import RESULTS_BUCKET, Aws, Invoke

pytestmark = pytest.mark.ocr

PAGE_PIXELS = (1000, 240)


def _document(kind: str) -> tuple[bytes, tuple[float, float], float]:
    """(bytes, page size in points, points per result pixel) of a 2-page scan of known text."""
    images = [
        synthetic.render_page(
            synthetic.sample_lines(3, offset=3 * n), size=PAGE_PIXELS, font_size=26, margin=30
        )
        for n in range(2)
    ]
    if kind == "pdf":
        # Scanned at 144 dpi: 500×120 pt pages, rendered at 2× to the same pixels.
        return synthetic.pdf_pages(images, resolution=144), (500, 120), 0.5
    if kind == "tiff":
        return synthetic.encode_pages(images, "TIFF"), PAGE_PIXELS, 1.0
    fmt = {"png": "PNG", "jpg": "JPEG"}[kind]
    return (
        synthetic.encode(images[0], fmt, **({"quality": 90} if fmt == "JPEG" else {})),
        (PAGE_PIXELS),
        1.0,
    )


def _complete(aws: Aws, job: DispatchedJob, invoke: Invoke) -> None:
    invoke(job)
    assert aws.record(job.job_id)["status"] == JobStatus.COMPLETED


@pytest.mark.parametrize("kind", ["pdf", "png", "jpg", "tiff"])
def test_a_completed_job_has_a_searchable_pdf_of_its_pages(
    kind: str, aws: Aws, invoke_warm: Invoke, tmp_path: Path
) -> None:
    # GIVEN a scanned document of known text and a QUEUED job
    data, page_size, points_per_pixel = _document(kind)
    job = aws.create_job(f"input/PP-OCRv5/scan.{kind}", data)

    # WHEN the processor completes it
    _complete(aws, job, invoke_warm)

    # THEN result.pdf has the input's pages at the input's size
    prefix = results_prefix(job.job_id, owner=job.owner)
    result = OcrResult.model_validate_json(aws.object_bytes(RESULTS_BUCKET, prefix + "result.json"))
    pdf = tmp_path / names.RESULT_PDF
    pdf.write_bytes(aws.object_bytes(RESULTS_BUCKET, prefix + names.RESULT_PDF))
    pages = read_pages(pdf)
    assert [(page.width, page.height) for page in pages] == [page_size] * len(result.pages)
    # AND poppler extracts each page's recognized text, every word inside its line's box
    for number, (page, recognized) in enumerate(zip(pages, result.pages, strict=True), start=1):
        assert pdf_text(pdf, number).split() == recognized.text.split()
        assert_words_in_boxes(page, recognized, points_per_pixel)


@pytest.mark.parametrize("kind", ["pdf", "png"])
def test_a_page_scanned_sideways_reads_back_in_order_and_is_shown_upright(
    kind: str, aws: Aws, invoke_warm: Invoke, tmp_path: Path
) -> None:
    # GIVEN a page of known text scanned sideways (turned a quarter counter-clockwise)
    lines = synthetic.sample_lines(5, offset=2)
    upright = synthetic.render_page(lines, size=(1400, 460), font_size=30, margin=40)
    scan = upright.rotate(90, expand=True)
    data = (
        synthetic.pdf_pages([scan], resolution=144)
        if kind == "pdf"
        else synthetic.encode(scan, "PNG")
    )
    job = aws.create_job(f"input/PP-OCRv5/sideways.{kind}", data)

    # WHEN the processor completes it
    _complete(aws, job, invoke_warm)

    # THEN the page was read turned, and result.pdf shows it upright (/Rotate 90)
    prefix = results_prefix(job.job_id, owner=job.owner)
    result = OcrResult.model_validate_json(aws.object_bytes(RESULTS_BUCKET, prefix + "result.json"))
    assert result.pages[0].rotation == 270
    pdf = tmp_path / names.RESULT_PDF
    pdf.write_bytes(aws.object_bytes(RESULTS_BUCKET, prefix + names.RESULT_PDF))
    assert PdfReader(pdf).pages[0].rotation == 90
    # AND pdftotext gives the page's text in order, top to bottom
    assert character_error_rate("\n".join(lines), pdf_text(pdf)) <= 0.02


def test_the_searchable_pdf_and_textract_json_can_be_turned_off(
    aws: Aws, invoke_warm: Invoke
) -> None:
    # GIVEN a job that asks for neither result.pdf nor result.textract.json
    data, _, _ = _document("png")
    options = JobOptions(searchable_pdf=False, textract_json=False)
    job = aws.create_job("input/PP-OCRv5/plain.png", data, options=options)

    # WHEN the processor completes it
    _complete(aws, job, invoke_warm)

    # THEN its result has result.json only
    assert aws.keys(RESULTS_BUCKET, results_prefix(job.job_id, owner=job.owner)) == [
        results_prefix(job.job_id, owner=job.owner) + names.RESULT_JSON
    ]


def _upload_parts(aws: Aws, job_id: str, chunks: list[list[str]]) -> None:
    """Each chunk's searchable part, as a chunk writes it."""
    for index, texts in enumerate(chunks):
        image = synthetic.render_page(texts, size=PAGE_PIXELS, font_size=26, margin=30)
        page = PageResult(
            page=index + 1,
            width=PAGE_PIXELS[0],
            height=PAGE_PIXELS[1],
            lines=[
                Line(text=text, box=((30, 30), (900, 30), (900, 70), (30, 70)), confidence=0.9)
                for text in texts
            ],
        )
        upload_searchable_pdf(
            aws.s3,
            RESULTS_BUCKET,
            searchable_part_key(job_id, index),
            data=synthetic.encode(image, "PNG"),
            pages=[page],
        )


def test_the_merge_joins_the_chunks_parts_in_order(aws: Aws, tmp_path: Path) -> None:
    # GIVEN the searchable parts of a job's three chunks
    _upload_parts(aws, "job", [["first chunk"], ["second chunk"], ["third chunk"]])

    # WHEN the merge joins them
    key = f"{names.RESULTS_PREFIX}job/{names.RESULT_PDF}"
    merge_searchable_parts(aws.s3, RESULTS_BUCKET, job_id="job", chunk_count=3, key=key)

    # THEN result.pdf has their pages in order
    pdf = tmp_path / names.RESULT_PDF
    pdf.write_bytes(aws.object_bytes(RESULTS_BUCKET, key))
    assert [pdf_text(pdf, n).split()[0] for n in (1, 2, 3)] == ["first", "second", "third"]


def test_a_missing_part_leaves_the_job_without_a_searchable_pdf(aws: Aws) -> None:
    # GIVEN a job whose second chunk wrote no part
    _upload_parts(aws, "job", [["first chunk"]])

    # WHEN the merge runs
    key = f"{names.RESULTS_PREFIX}job/{names.RESULT_PDF}"
    merged = merge_searchable_parts(aws.s3, RESULTS_BUCKET, job_id="job", chunk_count=2, key=key)

    # THEN there is no result.pdf, and the merge goes on (nothing raised)
    assert merged is None
    assert aws.keys(RESULTS_BUCKET, f"{names.RESULTS_PREFIX}job/") == []
