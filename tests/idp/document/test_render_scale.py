"""Each PDF page is rendered at a scale chosen from its content (idp.document.render_scale): a
scan at its own resolution within the detector's range, small text larger, every page within
the pixel budget, vector pages at the job's scale; the scale and its reason are on the page.

samples/2400dpi.pdf: a 2400-dpi typewriter scan on a 1.7-inch page (OCRmyPDF's test resource,
licence in samples/README.md), read end to end by real PP-OCRv5 on the offline weights.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from devkit import synthetic
from devkit.textmetrics import character_error_rate
from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.document.decode import open_document
from idp.document.ocr.models.cache import ModelCache
from idp.document.ocr.pipeline import ocr_document
from idp.document.ocr.registry import EngineRegistry
from idp.document.ocr.settings import EngineSettings
from idp.document.render_scale import PIXEL_BUDGET
from tests.paths import SAMPLES

SCAN_2400_DPI = SAMPLES / "2400dpi.pdf"


@pytest.mark.ocr
def test_a_high_dpi_scan_on_a_small_page_reads_from_its_own_resolution(
    models_dir: Path, tmp_path: Path
) -> None:
    # GIVEN a 2400-dpi scan on a 120×86 pt page (240×172 px at the fixed 2×: 13 % CER)
    cache = ModelCache(local_root=tmp_path, search_roots=[models_dir])
    registry = EngineRegistry(resolve=cache.fetch, settings=EngineSettings(cpu_threads=2))
    options = JobOptions()
    engine = registry.get(OcrModel.PP_OCRV5, "en", options)

    # WHEN it is read end to end with the job's default scale
    document = ocr_document(SCAN_2400_DPI.read_bytes(), engine=engine, options=options)

    # THEN its text reads at ≤ 3 % CER, from a page rendered several times larger than 2×
    page = document.pages[0]
    truth = (SAMPLES / "2400dpi.txt").read_text()
    assert character_error_rate(truth, page.text) <= 0.03
    assert page.width >= 3 * 240


def test_the_scale_and_its_reason_are_recorded_for_a_scan() -> None:
    # GIVEN the 2400-dpi scan on a small page
    with open_document(SCAN_2400_DPI.read_bytes()) as document:
        # WHEN its page is rendered
        page = document.page_image(1)

    # THEN the render says the scan's dpi, why it chose its scale, and the pixels match it
    assert page.render is not None
    assert page.render.scan_dpi == pytest.approx(2400, rel=0.01)
    assert "scan at 2400 dpi" in page.render.reason
    assert "text" in page.render.reason  # its typewriter lines were too small at 3× and raised
    assert page.render.scale >= 6
    assert page.width == pytest.approx(120 * page.render.scale, abs=1)


def test_a_vector_page_keeps_the_jobs_scale() -> None:
    # GIVEN a born-digital page of 13-pt text, 500×120 pt
    data = synthetic.text_pdf([["Invoice 2024-001", "Total due: 1,284.50 EUR"]])

    # WHEN it is rendered at the job's default scale
    with open_document(data) as document:
        page = document.page_image(1)

    # THEN it is rendered at 2× (1000×240 px), as a vector page
    assert page.render is not None
    assert (page.render.scale, page.render.reason, page.render.scan_dpi) == (
        2.0,
        "vector page",
        None,
    )
    assert (page.width, page.height) == (1000, 240)


def test_small_print_on_a_vector_page_is_rendered_larger() -> None:
    # GIVEN a born-digital page of 5-pt print (10 px per em at 2×)
    data = synthetic.text_pdf([["the terms and conditions in small print"]], font_size=5)

    # WHEN it is rendered
    with open_document(data) as document:
        page = document.page_image(1)

    # THEN its text gets at least 18 px per em
    assert page.render is not None
    assert page.render.scale * 5 >= 18
    assert "small print 5.0 pt" in page.render.reason


def test_a_300_dpi_scan_renders_at_216_dpi() -> None:
    # GIVEN a letter-size page carrying a 300-dpi scan of text
    scan = synthetic.render_page(synthetic.sample_lines(20), size=(2550, 3300), font_size=42)
    data = synthetic.pdf_pages([scan], resolution=300)

    # WHEN it is rendered
    with open_document(data) as document:
        page = document.page_image(1)

    # THEN it is rendered at 3× (the top of the detector's range), not at its full 300 dpi
    assert page.render is not None
    assert page.render.scan_dpi == pytest.approx(300, rel=0.01)
    assert page.render.scale == 3.0
    assert (page.width, page.height) == (1836, 2376)


def test_a_huge_page_with_a_low_dpi_scan_stays_within_the_pixel_budget() -> None:
    # GIVEN a 3000×2100 pt poster carrying a 96-dpi scan (25 MP at the fixed 2×)
    scan = synthetic.render_page(["POSTER"], size=(4000, 2800), font_size=400, margin=400)
    data = synthetic.pdf_pages([scan], resolution=96)

    # WHEN it is rendered
    with open_document(data) as document:
        page = document.page_image(1)

    # THEN it stays within 16 MP, and says so
    assert page.render is not None
    assert page.width * page.height <= PIXEL_BUDGET
    assert page.width * page.height >= 0.95 * PIXEL_BUDGET
    assert page.render.reason == "scan at 96 dpi; pixel budget"


def test_an_image_upload_has_no_render_scale() -> None:
    # GIVEN a PNG page
    data = synthetic.encode(Image.new("RGB", (400, 120), "white"), "PNG")

    # WHEN it is decoded
    with open_document(data) as document:
        page = document.page_image(1)

    # THEN its pixels are its own: no render scale
    assert page.render is None
    assert (page.width, page.height) == (400, 120)


def test_a_page_can_be_rendered_again_at_a_higher_scale() -> None:
    # GIVEN a vector page rendered at 2×, the third page of a chunk starting at page 11
    data = synthetic.text_pdf([["one"], ["two"], ["three"]])
    with open_document(data, page_offset=10) as document:
        first = document.page_image(3)

        # WHEN it is rendered again at 3.5× for a second read
        again = document.render_again(first, scale=3.5, reason="retry: text too small")

    # THEN it is the same page, 1.75× larger, and says why
    assert again.page == first.page == 13
    assert (again.width, again.height) == (1750, 420)
    assert again.render is not None
    assert (again.render.scale, again.render.reason) == (3.5, "retry: text too small")


def test_an_image_upload_cannot_be_rendered_again() -> None:
    data = synthetic.encode(Image.new("RGB", (400, 120), "white"), "PNG")
    with open_document(data) as document:
        page = document.page_image(1)
        with pytest.raises(TypeError, match="not a rendered PDF page"):
            document.render_again(page, scale=4.0, reason="retry")
