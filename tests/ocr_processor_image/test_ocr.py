"""The processor end to end with the real PP-OCRv5 engine on the offline weights (moto AWS)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from PIL import Image

from devkit import synthetic
from devkit.textmetrics import character_error_rate
from idp.contract import names, results
from idp.contract.names import JobStatus
from idp.contract.results import OcrResult
from idp.document.ocr.models.catalogue import TEXTLINE_ORIENTATION_MODEL
from idp.document.ocr.paddle.classifiers import OFFLINE_MODEL_NAME
from tests.processor_account import RESULTS_BUCKET, Aws, Invoke, WarmEngines

pytestmark = pytest.mark.ocr

PAGE_SIZE = (1000, 240)
FONT_SIZE = 26


def _page_lines(page_number: int) -> list[str]:
    return synthetic.sample_lines(3, offset=3 * page_number)


def _page(page_number: int) -> Image.Image:
    return synthetic.render_page(
        _page_lines(page_number), size=PAGE_SIZE, font_size=FONT_SIZE, margin=30
    )


def _document(kind: str) -> tuple[bytes, int]:
    """(bytes, page count) of a generated document of the given kind."""
    if kind == "pdf":
        # Vector text on 500×120 pt pages, rendered at 2× (144 dpi) = 1000×240 px.
        pages = [_page_lines(n) for n in range(3)]
        return synthetic.text_pdf(pages, page_size_pt=(500, 120), font_size=FONT_SIZE / 2), 3
    if kind == "tiff":
        return synthetic.encode_pages([_page(n) for n in range(2)], "TIFF"), 2
    fmt = {"png": "PNG", "jpg": "JPEG", "webp": "WEBP"}[kind]
    params: dict[str, Any] = {"quality": 90} if fmt in ("JPEG", "WEBP") else {}
    return synthetic.encode(_page(0), fmt, **params), 1


@pytest.mark.parametrize("kind", ["png", "pdf", "tiff", "jpg", "webp"])
def test_document_is_recognized_and_job_completes(kind: str, aws: Aws, invoke_warm: Invoke) -> None:
    # GIVEN a generated document of known text in the input bucket and a QUEUED job
    data, page_count = _document(kind)
    job = aws.create_job(f"input/PP-OCRv5/sample.{kind}", data)

    # WHEN the processor is invoked with the dispatched job
    response = invoke_warm(job)

    # THEN the job is COMPLETED with its page count, timings and content hash
    record = aws.record(job.job_id)
    assert response["status"] == JobStatus.COMPLETED
    assert record["status"] == JobStatus.COMPLETED
    assert record["page_count"] == page_count
    assert record["attempts"] == 1
    assert {"download", "engine_load", "rasterize", "ocr", "total"} <= set(record["timings_ms"])
    assert record["engine"]["models"] == [
        "PP-OCRv5_mobile_det",
        "PP-OCRv5_mobile_rec",
        OFFLINE_MODEL_NAME,  # page orientation (on by default), the offline model
        TEXTLINE_ORIENTATION_MODEL,  # and the line model that checks its proposal
    ]
    assert record["engine"]["name"] == "paddleocr/onnxruntime"
    result_key = results.result_key(job.job_id, owner=job.owner)
    assert record["result_uri"] == f"s3://{RESULTS_BUCKET}/{result_key}"
    assert result_key.startswith(f"{names.RESULTS_PREFIX}{job.owner}/{job.job_id}/")  # its sender's

    # AND result.json holds every page, in order, with the known text and boxes on the page
    result = OcrResult.model_validate_json(aws.object_bytes(RESULTS_BUCKET, result_key))
    assert record["content_sha256"] == result.source.sha256
    assert result.source.page_count == page_count
    assert [p.page for p in result.pages] == list(range(1, page_count + 1))
    for index, page in enumerate(result.pages):
        assert (page.width, page.height) == PAGE_SIZE
        expected = "\n".join(_page_lines(index))
        assert character_error_rate(expected, page.text) <= 0.02, page.text
        for line in page.lines:
            assert 0.0 <= line.confidence <= 1.0
            for x, y in line.box:
                assert 0 <= x <= page.width
                assert 0 <= y <= page.height
    assert result.text.split("\n\n")[0] == result.pages[0].text
    # PP-OCRv5 yields no Markdown, so no result.md, but a searchable result.pdf and the
    # Textract-shaped blocks; the result is also kept by content
    keys = aws.keys(RESULTS_BUCKET)
    pdf_key = results.result_key(job.job_id, names.RESULT_PDF, owner=job.owner)
    textract_key = results.result_key(job.job_id, names.RESULT_TEXTRACT, owner=job.owner)
    assert [k for k in keys if not k.startswith(names.RESULT_CACHE_PREFIX)] == sorted(
        [result_key, pdf_key, textract_key]
    )
    assert record["textract_uri"] == f"s3://{RESULTS_BUCKET}/{textract_key}"
    assert len([k for k in keys if k.startswith(names.RESULT_CACHE_PREFIX)]) == 1


def test_model_dirs_came_from_the_s3_model_cache(warm_engines: WarmEngines) -> None:
    # GIVEN the session's engine, built from an empty local root and a moto cache bucket
    # THEN every model dir (PP-OCRv5's two, the line orientation model) was unpacked from the
    # bucket's archives into that root
    assert set(warm_engines.fetched) == {
        "PP-OCRv5_mobile_det",
        "PP-OCRv5_mobile_rec",
        TEXTLINE_ORIENTATION_MODEL,
    }
    for name, path in warm_engines.fetched.items():
        assert path.name == name
        assert (path / "inference.yml").is_file()
        assert (path / ".idp-model-complete").is_file()


@pytest.mark.parametrize(
    ("name", "make", "code"),
    [
        ("empty.pdf", lambda: b"", "EMPTY_INPUT"),
        (
            "truncated.pdf",
            lambda: synthetic.truncated(synthetic.pdf_pages([_page(0), _page(1)])),
            "CORRUPT_DOCUMENT",
        ),
        ("locked.pdf", synthetic.encrypted_pdf, "ENCRYPTED_DOCUMENT"),
        ("notes.png", synthetic.text_file, "UNSUPPORTED_MEDIA_TYPE"),
        ("huge.png", synthetic.bomb_png, "IMAGE_TOO_LARGE"),
    ],
)
def test_bad_input_fails_with_its_code_and_the_warm_worker_then_completes_a_good_job(
    name: str,
    make: Callable[[], bytes],
    code: str,
    aws: Aws,
    warm_engines: WarmEngines,
    invoke_warm: Invoke,
) -> None:
    # GIVEN a warm processor (engine already loaded) and a bad input
    engine_before = warm_engines.registry.get(names.OcrModel.PP_OCRV5, "en").engine
    bad = aws.create_job(f"input/PP-OCRv5/{name}", make())

    # WHEN it is processed
    response = invoke_warm(bad)

    # THEN the job is FAILED with the input's own code and a message, without raising
    record = aws.record(bad.job_id)
    assert response["status"] == JobStatus.FAILED
    assert record["status"] == JobStatus.FAILED
    assert record["error"]["code"] == code
    assert record["error"]["message"]
    assert "result_uri" not in record

    # AND the same warm process then completes a good job with the same engine
    data, _ = _document("png")
    good = aws.create_job("input/PP-OCRv5/good.png", data)
    assert invoke_warm(good)["status"] == JobStatus.COMPLETED
    assert aws.record(good.job_id)["status"] == JobStatus.COMPLETED
    assert warm_engines.registry.get(names.OcrModel.PP_OCRV5, "en").engine is engine_before
