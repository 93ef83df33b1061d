"""Lines that read upward, read the right way up (idp.document.ocr.steps.upward_lines).

The page is drawn here: a plot's vertical axis labels and a correlation matrix's cells set on
their side, bottom to top, as R and xtable print them (the xtable Gallery's p26 and lme4's p38
in benchmarks/held_out_numbers.py). The lines are as PaddleOCR returned them there: the box
found, the text read upside down. The recognizer is PP-OCRv5's own, on the offline weights.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.contract.quads import bounds
from idp.contract.results import Line, Quad
from idp.document.decode import PageImage
from idp.document.ocr.engine import PageContent
from idp.document.ocr.registry import EngineRegistry
from idp.document.ocr.steps.upward_lines import read_upward_lines

pytestmark = pytest.mark.ocr

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
SIZE = 28


def _on_its_side(page: Image.Image, text: str, at: tuple[int, int], *, upward: bool) -> Quad:
    """`text` set on its side at `at` (bottom to top where `upward`, else top to bottom); its
    box with a small margin."""
    font = ImageFont.truetype(FONT, SIZE)
    *_, right, bottom = ImageDraw.Draw(page).textbbox((0, 0), text, font=font)
    flat = Image.new("RGB", (int(right) + 8, int(bottom) + 8), "white")
    ImageDraw.Draw(flat).text((4, 4), text, font=font, fill="black")
    turned = flat.rotate(90 if upward else -90, expand=True)
    page.paste(turned, at)
    left, top = at
    return (
        (left, top),
        (left + turned.width, top),
        (left + turned.width, top + turned.height),
        (left, top + turned.height),
    )


@pytest.fixture(scope="module")
def recognizer(registry: EngineRegistry) -> object:
    return registry.get(OcrModel.PP_OCRV5, "en", JobOptions()).engine


def _flat(page: Image.Image, texts: list[str]) -> list[Line]:
    """`texts` drawn lying flat, one under another at the page's right; a line for each."""
    draw = ImageDraw.Draw(page)
    font = ImageFont.truetype(FONT, SIZE)
    lines = []
    for number, text in enumerate(texts):
        x0, y0, x1, y1 = draw.textbbox((300, 100 + 50 * number), text, font=font)
        draw.text((300, 100 + 50 * number), text, font=font, fill="black")
        box: Quad = ((x0 - 4, y0 - 6), (x1 + 4, y0 - 6), (x1 + 4, y1 + 6), (x0 - 4, y1 + 6))
        lines.append(Line(text=text, box=box, confidence=0.99))
    return lines


FIGURE = ["Figure 3: profile zeta plots", "for the parameters of", "model fm1"]


def _read_upside_down(page: Image.Image) -> list[Line]:
    """An axis label and a matrix cell set bottom to top on `page`, as PaddleOCR read them there:
    upside down."""
    label = _on_its_side(page, "0.00 0.05 0.10 0.15", (60, 60), upward=True)
    cell = _on_its_side(page, "-0.65", (200, 60), upward=True)
    return [
        Line(text="900900000000200100000", box=label, confidence=0.54),
        Line(text="990-", box=cell, confidence=0.73),
    ]


def _read_again(content: PageContent, page: Image.Image, recognizer: object) -> PageContent:
    """`content`, its lines on their side read again from `page` (read_upward_lines)."""
    image = PageImage(page=1, pixels=np.asarray(page))
    return read_upward_lines(content, image, recognizer)  # type: ignore[arg-type]


def test_text_that_reads_upward_is_read_the_right_way_up(recognizer: object) -> None:
    # GIVEN an axis label and a matrix cell set bottom to top, read upside down, beside lines
    # of text lying flat
    page = Image.new("RGB", (900, 500), "white")
    read_upside_down = _read_upside_down(page)
    flat = _flat(page, FIGURE)
    content = PageContent(lines=[*read_upside_down, *flat])

    # WHEN lines on their side are read again
    read = _read_again(content, page, recognizer)

    # THEN they read as printed, surer than before, and the lines lying flat are left as they were
    assert [line.text for line in read.lines[:2]] == ["0.00 0.05 0.10 0.15", "-0.65"]
    assert all(line.confidence > 0.9 for line in read.lines[:2])
    assert read.lines[2:] == flat
    # and the label's words lie along it from the bottom up, inside its box
    words = read.lines[0].words
    assert [word.text for word in words] == ["0.00", "0.05", "0.10", "0.15"]
    x0, y0, x1, y1 = bounds(read_upside_down[0].box)
    centres = [sum(y for _, y in word.box) / 4 for word in words]
    assert centres == sorted(centres, reverse=True)
    assert all(y0 <= y <= y1 for y in centres)
    assert all(x0 <= x <= x1 for word in words for x, _ in word.box)


def test_a_page_whose_lines_mostly_stand_on_their_side_is_left_to_the_orientation_check(
    recognizer: object,
) -> None:
    # GIVEN the same lines on their side, read upside down, and only one line lying flat: a page
    # turned, or one read turned while its orientation is checked
    page = Image.new("RGB", (900, 500), "white")
    content = PageContent(lines=[*_read_upside_down(page), *_flat(page, FIGURE[:1])])

    # WHEN lines on their side are read again THEN nothing is read again
    assert _read_again(content, page, recognizer) == content


def test_text_that_reads_downward_and_a_lone_digit_keep_the_first_read(recognizer: object) -> None:
    # GIVEN a label set top to bottom, which PaddleOCR's own quarter turn reads right, and a
    # lone upright digit in a box taller than wide, read right
    page = Image.new("RGB", (900, 500), "white")
    label = _on_its_side(page, "Number of characteristics", (60, 20), upward=False)
    ImageDraw.Draw(page).text((200, 420), "4", font=ImageFont.truetype(FONT, SIZE), fill="black")
    digit: Quad = ((200, 420), (220, 420), (220, 460), (200, 460))
    lines = [
        Line(text="Number of characteristics", box=label, confidence=0.99),
        Line(text="4", box=digit, confidence=0.99),
        *_flat(page, FIGURE),
    ]
    content = PageContent(lines=lines)

    # WHEN lines on their side are read again THEN the first reads stand
    assert _read_again(content, page, recognizer) == content
