"""Each OCR'd page's verdict on itself (idp.document.ocr.steps.quality): `ok`, or `review` with the
reasons a person should look, from what real PP-OCRv5 read on real pages; and whether reading a
doubtful page again at a higher scale is worth it.

The pages: the demo's sample letter (a 150-dpi scan), samples/2400dpi.pdf (a 2400-dpi scan on a
small page) rendered at the fixed 2× the pipeline used before the scale was chosen from the scan,
and samples/line-chart.pdf (a real chart; licences in samples/README.md).
"""

from __future__ import annotations

import numpy as np
import pytest

from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.contract.results import OrientationCheck, PageQuality, RenderInfo, ReviewReason
from idp.document.decode import PageImage, open_document
from idp.document.ocr.engine import PageContent
from idp.document.ocr.page import Reader, read_page
from idp.document.ocr.pipeline import ocr_document
from idp.document.ocr.registry import EngineRegistry
from idp.document.ocr.steps.quality import (
    assess_page,
    number_floor_for,
    retry_scale,
    second_read_is_better,
)
from tests.paths import REPO_ROOT, SAMPLES

DEMO_LETTER = REPO_ROOT / "samples" / "sample-letter.pdf"
SCAN_2400_DPI = SAMPLES / "2400dpi.pdf"
LINE_CHART = SAMPLES / "line-chart.pdf"
# Labels of the chart, as printed.
CHART_LABELS = [
    "Support",
    "Oppose",
    "Newyorkbrad",
    "NuclearWarfare",
    "Carcharoth",
    "Coren",
    "Guerillero",
    "Keilana",
    "Beeblebrox",
    "Richwales",
    "Pgallert",
    "Jclemens",
]


@pytest.fixture(scope="module")
def engine(registry: EngineRegistry) -> Reader:
    return registry.get(OcrModel.PP_OCRV5, "en", JobOptions())


@pytest.fixture(scope="module")
def letter() -> PageImage:
    with open_document(DEMO_LETTER.read_bytes()) as document:
        return document.page_image(1)


@pytest.fixture(scope="module")
def letter_read(engine: Reader, letter: PageImage) -> PageContent:
    return read_page(engine, letter)


@pytest.fixture(scope="module")
def small_scan_at_2x() -> PageImage:
    with open_document(SCAN_2400_DPI.read_bytes()) as document:
        page = document.page_image(1)
        return document.render_again(page, scale=2.0, reason="the fixed 2×")


@pytest.mark.ocr
def test_a_clean_scan_read_well_is_ok(letter: PageImage, letter_read: PageContent) -> None:
    # GIVEN the demo letter read by PP-OCRv5
    # WHEN its read is assessed
    quality = assess_page(letter.pixels, letter_read, letter.render)

    # THEN it is ok, with the signals that say why
    assert (quality.verdict, quality.reasons) == ("ok", [])
    assert quality.lines == len(letter_read.lines)
    assert quality.mean_confidence is not None
    assert quality.mean_confidence >= 0.9
    assert quality.ink_covered is not None
    assert quality.ink_covered >= 0.95
    assert quality.line_height_px is not None
    assert quality.line_height_px >= 20


@pytest.mark.ocr
def test_a_blank_page_is_ok(engine: Reader) -> None:
    # GIVEN a blank white page, read by PP-OCRv5 (nothing on it)
    page = PageImage(page=1, pixels=np.full((1100, 850, 3), 255, dtype=np.uint8))
    content = read_page(engine, page)

    # WHEN its read is assessed
    quality = assess_page(page.pixels, content, None)

    # THEN an empty read of an empty page is ok
    assert content.lines == []
    assert (quality.verdict, quality.reasons) == ("ok", [])


@pytest.mark.ocr
def test_a_page_with_ink_but_no_text_read_is_for_review(letter: PageImage) -> None:
    # GIVEN the demo letter, whose text the engine did not find
    nothing_read = PageContent()

    # WHEN that read is assessed
    quality = assess_page(letter.pixels, nothing_read, letter.render)

    # THEN it is never a silent success
    assert quality.verdict == "review"
    assert ReviewReason.NO_TEXT_FOUND in quality.reasons
    assert ReviewReason.INK_NOT_READ in quality.reasons
    assert quality.ink_covered == 0.0


@pytest.mark.ocr
def test_lines_read_from_too_few_pixels_are_for_review(
    engine: Reader, small_scan_at_2x: PageImage
) -> None:
    # GIVEN the 2400-dpi scan rendered at the fixed 2× (8-px lines), read by PP-OCRv5
    content = read_page(engine, small_scan_at_2x)

    # WHEN its read is assessed
    quality = assess_page(small_scan_at_2x.pixels, content, small_scan_at_2x.render)

    # THEN it is for review: its text is too small and read with low confidence
    assert quality.verdict == "review"
    assert ReviewReason.TEXT_TOO_SMALL in quality.reasons
    assert ReviewReason.LOW_CONFIDENCE in quality.reasons
    # AND reading it again at a higher scale is worth it: lines near 28 px, within the scan
    scale = retry_scale(small_scan_at_2x, quality)
    assert scale is not None
    assert 5 <= scale <= 9


@pytest.mark.ocr
def test_lines_the_recognizer_barely_read_are_for_review(
    letter: PageImage, letter_read: PageContent
) -> None:
    # GIVEN the demo letter's lines, as if each had been read at 0.45 confidence
    doubtful = PageContent(
        lines=[line.model_copy(update={"confidence": 0.45}) for line in letter_read.lines]
    )

    # WHEN the read is assessed
    quality = assess_page(letter.pixels, doubtful, letter.render)

    # THEN it is for review: low mean confidence, many unreadable lines
    assert quality.verdict == "review"
    assert quality.reasons == [
        ReviewReason.LOW_CONFIDENCE,
        ReviewReason.MANY_UNREADABLE_LINES,
    ]
    assert quality.low_confidence_lines == len(letter_read.lines)
    # AND a higher scale would not help: its lines are already tall
    assert retry_scale(letter, quality) is None


@pytest.mark.ocr
def test_a_few_lines_read_as_stray_glyphs_put_a_well_read_page_up_for_review(
    letter: PageImage, letter_read: PageContent
) -> None:
    # GIVEN the demo letter's lines, four of them (more than 15 % of the page) read at 0.3 as
    # one stray glyph each, as a chart's markers read; the rest as read
    lines = letter_read.lines
    assert len(lines) < 4 / 0.15
    doubtful = PageContent(
        lines=[
            line.model_copy(update={"confidence": 0.3, "text": "木"}) if number < 4 else line
            for number, line in enumerate(lines)
        ]
    )

    # WHEN the read is assessed
    quality = assess_page(letter.pixels, doubtful, letter.render)

    # THEN it is for review for those lines, though its mean confidence (per character) is high
    assert quality.reasons == [ReviewReason.MANY_UNREADABLE_LINES]
    assert quality.mean_confidence is not None
    assert quality.mean_confidence >= 0.9
    assert quality.low_confidence_lines == 4


@pytest.mark.ocr
def test_one_or_two_doubtful_lines_leave_a_page_ok(
    letter: PageImage, letter_read: PageContent
) -> None:
    # GIVEN the demo letter with two lines read at 0.3 as stray glyphs: too few to doubt it
    doubtful = PageContent(
        lines=[
            line.model_copy(update={"confidence": 0.3, "text": "木"}) if number < 2 else line
            for number, line in enumerate(letter_read.lines)
        ]
    )

    # WHEN the read is assessed THEN it is ok, and the two lines are counted
    quality = assess_page(letter.pixels, doubtful, letter.render)
    assert quality.verdict == "ok"
    assert quality.low_confidence_lines == 2


@pytest.mark.ocr
def test_a_real_chart_stays_upright_with_its_labels_and_its_stray_glyphs_go_to_review(
    engine: Reader,
) -> None:
    # GIVEN a real line chart (slanted labels, a legend, 96 dpi) that the page classifier alone
    # turned upside down and read as garbage, COMPLETED with nothing flagged
    data = LINE_CHART.read_bytes()

    # WHEN it is OCR'd as the processor does
    (page,) = ocr_document(data, engine=engine, options=JobOptions()).pages

    # THEN it is read as uploaded, with its labels
    assert page.rotation == 0
    found = set(page.text.split())
    assert len(found.intersection(CHART_LABELS)) >= 0.8 * len(CHART_LABELS)
    # AND the chart's markers, read as stray glyphs, put it up for review
    assert page.quality is not None
    assert page.quality.verdict == "review"
    assert ReviewReason.MANY_UNREADABLE_LINES in page.quality.reasons


@pytest.mark.ocr
def test_a_contested_orientation_is_for_review(letter: PageImage, letter_read: PageContent) -> None:
    # GIVEN the demo letter read upright, where the evidence on its rotation was contested
    check = OrientationCheck(
        proposed=180, rotation=0, reason="too close to call", evidence={"contested": True}
    )
    content = PageContent(lines=letter_read.lines, orientation=check)

    # WHEN the read is assessed
    quality = assess_page(letter.pixels, content, letter.render)

    # THEN it is for review, for its orientation only
    assert (quality.verdict, quality.reasons) == ("review", [ReviewReason.ORIENTATION_UNCERTAIN])


@pytest.mark.ocr
def test_a_sideways_page_read_as_given_is_for_review(
    registry: EngineRegistry, letter: PageImage
) -> None:
    # GIVEN the demo letter scanned sideways, read as given (no orientation step)
    sideways = PageImage(page=1, pixels=np.ascontiguousarray(np.rot90(letter.pixels)))
    engine = registry.get(OcrModel.PP_OCRV5, "en", JobOptions(use_doc_orientation_classify=False))
    content = read_page(engine, sideways)

    # WHEN the read is assessed
    quality = assess_page(sideways.pixels, content, None)

    # THEN it is for review: its text was not read
    assert quality.verdict == "review"
    assert ReviewReason.INK_NOT_READ in quality.reasons


@pytest.mark.ocr
def test_lines_standing_upright_on_the_page_are_for_review(
    letter: PageImage, letter_read: PageContent
) -> None:
    # GIVEN the demo letter turned a quarter, with its lines found where they stand on it but
    # boxed as upright text (each box starts at its top-left corner, as the detector boxes a
    # page it reads as given)
    width = letter.width
    sideways = np.ascontiguousarray(np.rot90(letter.pixels))
    lines = []
    for line in letter_read.lines:
        xs, ys = [x for x, _ in line.box], [y for _, y in line.box]
        left, right = min(ys), max(ys)
        top, bottom = width - max(xs), width - min(xs)
        box = ((left, top), (right, top), (right, bottom), (left, bottom))
        lines.append(line.model_copy(update={"box": box}))

    # WHEN the read is assessed
    quality = assess_page(sideways, PageContent(lines=lines), None)

    # THEN it is for review: a sideways page read as given
    assert (quality.verdict, quality.reasons) == ("review", [ReviewReason.TEXT_VERTICAL])


@pytest.mark.ocr
def test_a_sideways_page_read_upright_is_ok(engine: Reader, letter: PageImage) -> None:
    # GIVEN the demo letter scanned sideways, read turned upright by the orientation step
    sideways = PageImage(page=1, pixels=np.ascontiguousarray(np.rot90(letter.pixels)))
    content = read_page(engine, sideways)

    # WHEN the read is assessed (its boxes lie along its text, upright on the page)
    quality = assess_page(sideways.pixels, content, None)

    # THEN it is ok
    assert content.rotation == 270
    assert (quality.verdict, quality.reasons) == ("ok", [])


@pytest.mark.ocr
def test_a_scan_with_too_few_dots_for_its_text_is_low_resolution(
    letter: PageImage, letter_read: PageContent
) -> None:
    # GIVEN the demo letter's read, as if the page had been a 30-dpi scan rendered at 2×
    coarse = RenderInfo(scale=2.083, reason="scan at 30 dpi", scan_dpi=30)

    # WHEN it is assessed
    quality = assess_page(letter.pixels, letter_read, coarse)

    # THEN it is for review: the scan itself has under 14 px per line
    assert (quality.verdict, quality.reasons) == ("review", [ReviewReason.LOW_RESOLUTION])


def test_a_raster_image_is_never_rendered_again() -> None:
    # GIVEN a PNG page whose text came out too small
    page = PageImage(page=1, pixels=np.full((200, 300, 3), 255, dtype=np.uint8))
    quality = PageQuality(
        verdict="review", reasons=[ReviewReason.TEXT_TOO_SMALL], line_height_px=8.0
    )

    # THEN its own pixels are all there is: no second read
    assert retry_scale(page, quality) is None


def test_a_page_at_its_pixel_budget_is_not_rendered_again() -> None:
    # GIVEN a 4000×4000 px PDF page (16 MP, the budget) whose text came out too small
    page = PageImage(
        page=1,
        pixels=np.zeros((4000, 4000, 3), dtype=np.uint8),
        render=RenderInfo(scale=2.0, reason="vector page"),
    )
    quality = PageQuality(
        verdict="review", reasons=[ReviewReason.TEXT_TOO_SMALL], line_height_px=8.0
    )

    # THEN there is no room to render it larger
    assert retry_scale(page, quality) is None


def test_a_second_read_with_fewer_doubts_replaces_the_first() -> None:
    first = PageQuality(
        verdict="review",
        reasons=[ReviewReason.LOW_CONFIDENCE, ReviewReason.TEXT_TOO_SMALL],
        mean_confidence=0.84,
    )
    second = PageQuality(verdict="ok", mean_confidence=0.95)
    assert second_read_is_better(first, second)
    assert not second_read_is_better(second, first)


def _with_number_confidence(read: PageContent, number: str, confidence: float) -> PageContent:
    """The read with the word `number` given `confidence`, as if one of its digits were
    doubtful."""
    lines = [
        line.model_copy(
            update={
                "words": [
                    word.model_copy(update={"confidence": confidence})
                    if word.text.strip(".,") == number
                    else word
                    for word in line.words
                ]
            }
        )
        for line in read.lines
    ]
    return PageContent(lines=lines)


@pytest.mark.ocr
def test_numbers_read_with_sure_digits_leave_a_page_ok(
    letter: PageImage, letter_read: PageContent
) -> None:
    # GIVEN the demo letter read by PP-OCRv5: its amounts, dates and phone number
    # WHEN the read is assessed
    quality = assess_page(letter.pixels, letter_read, letter.render)

    # THEN every number was measured, none is doubtful
    assert quality.numbers is not None
    assert quality.numbers >= 5
    assert quality.doubtful_numbers == []
    assert ReviewReason.NUMBERS_DOUBTFUL not in quality.reasons


@pytest.mark.ocr
def test_an_amount_read_with_a_doubtful_digit_puts_the_page_up_for_review(
    letter: PageImage, letter_read: PageContent
) -> None:
    # GIVEN the demo letter where the amount's least sure digit was read at 0.5
    doubtful = _with_number_confidence(letter_read, "1,284.50", 0.5)

    # WHEN the read is assessed
    quality = assess_page(letter.pixels, doubtful, letter.render)

    # THEN the page goes to review, and says which number to check
    assert quality.verdict == "review"
    assert quality.reasons == [ReviewReason.NUMBERS_DOUBTFUL]
    assert quality.doubtful_numbers == ["1,284.50"]


@pytest.mark.ocr
def test_a_number_is_doubtful_under_its_own_recognizers_floor(
    letter: PageImage, letter_read: PageContent
) -> None:
    # GIVEN the demo letter with the amount's least sure digit read at 0.9: sure enough for
    # PP-OCRv5, which reads few numbers wrong above 0.70, not for PP-OCRv6, which reads many
    # numbers wrong at that confidence
    doubtful = _with_number_confidence(letter_read, "1,284.50", 0.9)
    ppocrv5 = number_floor_for(["PP-OCRv5_mobile_det", "PP-OCRv5_mobile_rec"])
    ppocrv6 = number_floor_for(["PP-OCRv6_small_det", "PP-OCRv6_small_rec", "PP-LCNet_x1_0"])

    # WHEN the read is assessed against each recognizer's floor
    as_v5 = assess_page(letter.pixels, doubtful, letter.render, number_floor=ppocrv5)
    as_v6 = assess_page(letter.pixels, doubtful, letter.render, number_floor=ppocrv6)

    # THEN only PP-OCRv6's read sends the page to review for that number
    assert (ppocrv5, ppocrv6) == (0.70, 0.95)
    assert as_v5.doubtful_numbers == []
    assert "1,284.50" in as_v6.doubtful_numbers
    assert as_v6.reasons == [ReviewReason.NUMBERS_DOUBTFUL]


@pytest.mark.ocr
def test_words_without_a_confidence_give_no_verdict_on_numbers(
    letter: PageImage, letter_read: PageContent
) -> None:
    # GIVEN the letter's lines as an engine that gives no per-word confidence reads them
    bare = PageContent(
        lines=[
            line.model_copy(
                update={"words": [w.model_copy(update={"confidence": None}) for w in line.words]}
            )
            for line in letter_read.lines
        ]
    )

    # WHEN assessed THEN nothing is said about its numbers
    quality = assess_page(letter.pixels, bare, letter.render)
    assert (quality.numbers, quality.doubtful_numbers) == (None, [])
    assert quality.verdict == "ok"
