"""Pages of hostile shape: the budgets every image step keeps to, a tall page read in tiles at its
text's size, a row that ends in an amount read as one line, and a verdict that sees text the
detector saw too small. The real engine reads generated receipts 576 px wide and 5,000-10,000 px
tall (devkit.receipts) with PP-OCRv5 and PP-OCRv6."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from devkit import hostile
from devkit.receipts import receipt
from devkit.textmetrics import character_error_rate
from idp.contract.errors import ImageTooLarge, UnsupportedShape
from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.contract.results import Block, EngineInfo, Line, ReviewReason
from idp.document.budgets import ImageBudgets, budgets, budgets_for
from idp.document.decode import PageImage, open_document
from idp.document.ocr.engine import PageContent
from idp.document.ocr.paddle.classifiers import OnnxOrientationClassifier
from idp.document.ocr.page import Reader, read_page, recognize
from idp.document.ocr.pipeline import ocr_document
from idp.document.ocr.registry import EngineRegistry
from idp.document.ocr.steps.quality import assess_page
from idp.document.ocr.steps.rows import join_amount_rows
from idp.document.ocr.steps.tiles import MIN_OVERLAP, read_in_tiles, tile_bands


def _line(text: str, x0: float, y0: float, x1: float, y1: float, confidence: float = 0.9) -> Line:
    return Line(text=text, box=((x0, y0), (x1, y0), (x1, y1), (x0, y1)), confidence=confidence)


# -- budgets -------------------------------------------------------------------------------------
def test_a_page_too_thin_or_too_long_to_hold_text_is_refused_by_its_shape() -> None:
    limits = budgets_for(4096)
    with pytest.raises(UnsupportedShape, match="60000×2 pixels: 2 px across is too thin"):
        limits.check_shape(60000, 2, "PNG image")
    with pytest.raises(UnsupportedShape, match="200 times longer than wide"):
        limits.check_shape(40, 8000, "PNG image")
    limits.check_shape(576, 10000, "PNG image")  # a long receipt is a page
    limits.check_shape(8, 800, "PNG image")


def test_the_page_budget_follows_the_functions_memory() -> None:
    assert budgets_for(3008).page_pixels < budgets_for(4096).page_pixels
    assert budgets_for(4096).page_pixels == 80_000_000  # the pipeline's own limit
    with pytest.raises(ImageTooLarge, match="limit is"):
        budgets_for(3008).check_pixels(10000, 10000, "PNG image")


def test_a_working_copy_is_scaled_to_fit_its_budget() -> None:
    limits = ImageBudgets(memory_mb=4096, page_pixels=1, working_pixels=1_000_000)
    # The page classifier's short side to 256 px on a 800×8 strip: 25,600 × 256 asked for.
    width, height = limits.fit(800, 8, 32.0)
    assert width * height <= 1_000_000
    assert width / height == pytest.approx(100, rel=0.01)
    assert limits.fit(1000, 800, 0.5) == (500, 400)  # within budget: as asked


def test_decoding_refuses_the_shape_before_any_pixel_is_decoded() -> None:
    with pytest.raises(UnsupportedShape, match="too thin"):
        open_document(hostile.raster("PNG", "L", 60000, 2, ink="blank"))


def test_the_page_classifier_keeps_to_its_budget_on_a_long_strip() -> None:
    # GIVEN a strip at the longest shape a page may have, with ink along it
    pixels = np.full((8, 800, 3), 255, dtype=np.uint8)
    pixels[3:5, :, :] = 0
    # WHEN the classifier proposes a rotation, it answers (its input is 256 × 25,600 at most)
    proposal = OnnxOrientationClassifier.offline().propose(pixels)
    assert proposal.rotation in (0, 90, 180, 270)
    assert budgets().working_pixels >= 256 * 25_600


# -- tiles ---------------------------------------------------------------------------------------
def test_a_page_of_ordinary_shape_is_one_tile() -> None:
    assert tile_bands(1700, 2200, 1280) == [(0, 2200)]
    assert tile_bands(576, 1400, 1280) == [(0, 1400)]


def test_a_tall_page_is_tiled_down_its_length_with_overlaps() -> None:
    bands = tile_bands(576, 10000, 1280)
    assert bands[0][0] == 0
    assert bands[-1][1] == 10000
    assert all(bottom - top == 1280 for top, bottom in bands)  # the detector reads them unscaled
    overlaps = [above[1] - below[0] for above, below in pairwise(bands)]
    assert min(overlaps) >= MIN_OVERLAP
    # A wide tall page is tiled at its own width's shape.
    wide = tile_bands(2480, 20000, 1280)
    assert wide[0] == (0, 3720)


def test_a_tall_page_no_taller_than_one_tile_is_read_whole() -> None:
    # The fuzzer's find (seed 2003): an 8 × 96 page, taller than 2.5 widths but shorter than a
    # tile, made a tile with no step between tiles (ZeroDivisionError).
    assert tile_bands(8, 96, 1280) == [(0, 96)]
    assert tile_bands(576, 1280, 1280) == [(0, 1280)]
    # A detector side smaller than the overlap still steps down the page.
    bands = tile_bands(40, 1000, 64)
    assert bands[0] == (0, 64)
    assert bands[-1][1] == 1000
    assert all(below[0] > above[0] for above, below in pairwise(bands))


def test_a_page_that_needs_too_many_tiles_is_refused() -> None:
    with pytest.raises(UnsupportedShape, match="tiles"):
        tile_bands(8, 800_000, 1280)


def test_a_line_in_two_tiles_is_kept_once_from_the_tile_that_owns_it() -> None:
    # GIVEN a tall page and a fake detector that finds a line wherever a tile holds its rows
    page = PageImage(page=1, pixels=np.full((4000, 600, 3), 255, dtype=np.uint8))
    truth = [(f"row {y}", y) for y in range(40, 3960, 37)]
    bands = tile_bands(600, 4000, 1280)
    calls: list[int] = []

    def recognize(tile: PageImage) -> PageContent:
        top = bands[len(calls)][0]  # tiles are read top to bottom
        calls.append(top)
        inside = [(text, y - top) for text, y in truth if top <= y and y + 20 <= top + tile.height]
        return PageContent(lines=[_line(text, 10, y, 300, y + 20) for text, y in inside])

    # WHEN it is read in tiles
    content = read_in_tiles(page, recognize, 1280)

    # THEN every line is read once, at its place on the page, and the detector's scale is 1
    assert len(calls) > 1
    assert [line.text for line in content.lines] == [text for text, _ in truth]
    assert [line.box[0][1] for line in content.lines] == [y for _, y in truth]
    assert content.detector_scale == 1.0


class _TextDetectorEngine:
    """A stand-in text-line engine whose detector sees at most `detector_side` pixels: it records
    the heights of the images it is given and finds nothing on them."""

    detector_side = 1280

    def __init__(self) -> None:
        self.info = EngineInfo(name="stand-in", version="0", models=["stand-in"])
        self.heights: list[int] = []

    def recognize(self, page: PageImage) -> PageContent:
        self.heights.append(page.height)
        return PageContent()


def test_the_page_path_reads_a_tall_page_in_tiles_for_an_engine_with_a_text_detector() -> None:
    # GIVEN a receipt-shaped page and an engine whose detector scales pages to 1,280 px
    engine = _TextDetectorEngine()
    page = PageImage(page=1, pixels=np.full((4000, 600, 3), 255, dtype=np.uint8))

    # WHEN the page path reads it, and a wrapper hands it to the engine's recognize step
    content = read_page(Reader(engine), page)
    wrapped = recognize(engine, page)

    # THEN the engine saw the page's tiles, not the page, and the detector's scale is the tiles'
    tiles = [bottom - top for top, bottom in tile_bands(600, 4000, 1280)]
    assert engine.heights == tiles + tiles
    assert content.detector_scale == wrapped.detector_scale == 1.0


# -- rows ----------------------------------------------------------------------------------------
def test_a_table_row_that_ends_in_an_amount_reads_as_one_line() -> None:
    lines = [
        _line("CORNER GROCERY LTD", 24, 10, 300, 32),
        _line("COFFEE BEANS 1KG", 24, 50, 230, 72, 0.9),
        _line("12.50", 480, 51, 550, 73, 1.0),
        _line("Name", 24, 90, 80, 112),
        _line("Colour", 480, 90, 550, 112),
    ]
    blocks = [
        Block(type="paragraph", box=lines[0].box, lines=[0]),
        Block(type="table", box=lines[1].box, lines=[1, 2, 3, 4]),
    ]
    joined = join_amount_rows(PageContent(lines=lines, blocks=blocks))
    assert [line.text for line in joined.lines] == [
        "CORNER GROCERY LTD",
        "COFFEE BEANS 1KG 12.50",
        "Name",  # a row of words keeps its cells
        "Colour",
    ]
    row = joined.lines[1]
    assert row.box == ((24, 50), (550, 50), (550, 73), (24, 73))
    assert row.confidence == pytest.approx((16 * 0.9 + 5 * 1.0) / 21)
    assert [block.lines for block in joined.blocks] == [[0], [1, 2, 3]]
    assert joined.blocks[1].text == "COFFEE BEANS 1KG 12.50\nName\nColour"


def test_prose_is_never_joined() -> None:
    lines = [_line("Total", 24, 50, 100, 72), _line("12.50", 480, 50, 550, 72)]
    content = PageContent(
        lines=lines, blocks=[Block(type="paragraph", box=lines[0].box, lines=[0, 1])]
    )
    assert join_amount_rows(content) is content


# -- the verdict ---------------------------------------------------------------------------------
def test_text_the_detector_saw_too_small_is_for_review() -> None:
    pixels = np.full((120, 7000, 3), 255, dtype=np.uint8)
    lines = [_line("Invoice 2041 was issued", 20, 20, 900, 46, 0.97)]
    pixels[22:44, 20:900] = 0
    seen_at_scale = PageContent(lines=lines, detector_scale=1280 / 7000)
    quality = assess_page(pixels, seen_at_scale, None)
    assert ReviewReason.TEXT_SHRUNK in quality.reasons
    assert quality.detected_line_px == pytest.approx(26 * 1280 / 7000, abs=0.1)
    unscaled = assess_page(pixels, PageContent(lines=lines, detector_scale=1.0), None)
    assert ReviewReason.TEXT_SHRUNK not in unscaled.reasons


# -- long receipts, read by the real engines -------------------------------------------------------
@pytest.mark.ocr
@pytest.mark.parametrize(
    ("model", "seed", "items"),
    [(OcrModel.PP_OCRV5, 3, 140), (OcrModel.PP_OCRV5, 4, 280), (OcrModel.PP_OCRV6, 5, 200)],
)
def test_a_long_receipt_reads_at_its_text_size_with_each_item_and_its_price_on_one_line(
    registry: EngineRegistry, model: OcrModel, seed: int, items: int
) -> None:
    # GIVEN a till receipt 576 px wide and 5,000 to 10,000 px tall
    made = receipt(seed, items)
    assert 576 * 8 < made.image.height <= 10_000
    data = hostile.encode_png(made.image)

    # WHEN it is read
    done = ocr_document(data, engine=registry.get(model, "en", JobOptions()), options=JobOptions())

    # THEN it reads at under 2 % CER, each item row is one line, and the verdict is ok
    page = done.pages[0]
    read = [line.text for line in page.lines]
    assert character_error_rate("\n".join(made.lines), "\n".join(read)) <= 0.02
    rows = {f"{name} {price}" for name, price in made.items}
    assert sum(text in rows for text in read) >= 0.95 * len(rows)
    assert page.quality is not None
    assert page.quality.verdict == "ok", page.quality.reasons
