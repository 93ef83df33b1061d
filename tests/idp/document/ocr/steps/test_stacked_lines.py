"""Lines stacked in one box, read band by band (idp.document.ocr.steps.stacked_lines).

The page is drawn here, so where every glyph stands is known; the tall box is the one PP-OCRv5's
detector returned on the xtable Gallery's p14 (benchmarks/held_out_numbers.py): a table's last
column of two-digit scores, one per row, taken for one line and read "384656472". The recognizer
is PP-OCRv5's own, on the offline weights.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.contract.results import Line, Quad
from idp.document.decode import PageImage
from idp.document.ocr.engine import PageContent
from idp.document.ocr.registry import EngineRegistry
from idp.document.ocr.steps.stacked_lines import split_stacked_lines

pytestmark = pytest.mark.ocr

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"
SIZE = 28  # px: 10-pt type at 200 dpi
ROW = 50
SCORES = ["43", "88", "34", "65", "75", "74", "72"]
GROUPS = ["HISPANIC", "BLACK", "HISPANIC", "HISPANIC", "WHITE", "BLACK", "HISPANIC"]


def _quad(x0: float, y0: float, x1: float, y1: float) -> Quad:
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def _table(draw_rules: bool = False, row: int = ROW) -> tuple[Image.Image, list[Line], Quad]:
    """A table of seven rows `row` px apart (a group name, then a score at the right); a line per
    group name, as the detector found them, and the box around the whole score column."""
    image = Image.new("RGB", (900, 120 + row * len(SCORES)), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, SIZE)
    lines, column = [], []
    for number, (group, score) in enumerate(zip(GROUPS, SCORES, strict=True)):
        y = 60 + row * number
        draw.text((80, y), group, font=font, fill="black")
        x0, y0, x1, y1 = draw.textbbox((80, y), group, font=font)
        lines.append(Line(text=group, box=_quad(x0 - 4, y0 - 6, x1 + 4, y1 + 6), confidence=0.99))
        draw.text((700, y), score, font=font, fill="black")
        column.append(draw.textbbox((700, y), score, font=font))
    if draw_rules:  # a table's vertical rule, inside the column's box
        draw.line((696, 40, 696, 120 + row * len(SCORES) - 40), fill="black", width=2)
    left = min(b[0] for b in column) - 6
    top, right, bottom = column[0][1] - 6, max(b[2] for b in column) + 6, column[-1][3] + 6
    return image, lines, _quad(left, top, right, bottom)


@pytest.fixture(scope="module")
def recognizer(registry: EngineRegistry) -> object:
    return registry.get(OcrModel.PP_OCRV5, "en", JobOptions()).engine


def test_a_column_of_numbers_in_one_box_is_read_row_by_row(recognizer: object) -> None:
    # GIVEN the rows' group names found line by line, and the score column found as one box
    image, lines, column = _table()
    tall = Line(text="384656472", box=column, confidence=0.55)
    content = PageContent(lines=[*lines, tall])

    # WHEN stacked lines are split
    read = split_stacked_lines(content, PageImage(page=1, pixels=np.asarray(image)), recognizer)  # type: ignore[arg-type]

    # THEN the group names are kept, and the box is replaced by each score, in its own row
    assert read.lines[: len(lines)] == lines
    scores = read.lines[len(lines) :]
    assert [line.text for line in scores] == SCORES
    for number, line in enumerate(scores):
        centre = sum(y for _, y in line.box) / 4
        assert abs(centre - (60 + ROW * number + SIZE / 2)) < ROW / 2
        assert [word.text for word in line.words] == [line.text]


def test_two_numbers_set_solid_in_one_box_are_read_apart(recognizer: object) -> None:
    # GIVEN a table set solid (rows one type size apart, as in a catalogue's price table), each
    # score found as a line but the first two, which the detector took for one box: under twice
    # a line's height, since the rows' boxes overlap
    image, lines, _ = _table(row=SIZE)
    font = ImageFont.truetype(FONT, SIZE)
    draw = ImageDraw.Draw(image)
    found = [
        draw.textbbox((700, 60 + SIZE * n), score, font=font) for n, score in enumerate(SCORES)
    ]
    scores = [
        Line(text=score, box=_quad(x0 - 6, y0 - 6, x1 + 6, y1 + 6), confidence=0.99)
        for score, (x0, y0, x1, y1) in zip(SCORES[2:], found[2:], strict=True)
    ]
    top, bottom = found[0][1] - 6, found[1][3] + 6
    pair = Line(
        text="$4$", box=_quad(found[0][0] - 6, top, found[0][2] + 6, bottom), confidence=0.6
    )
    median = float(np.median([line.box[2][1] - line.box[0][1] for line in [*lines, *scores]]))
    assert 1.6 * median <= bottom - top < 2 * median
    content = PageContent(lines=[*lines, *scores, pair])

    # WHEN stacked lines are split
    read = split_stacked_lines(content, PageImage(page=1, pixels=np.asarray(image)), recognizer)  # type: ignore[arg-type]

    # THEN the box is replaced by its two scores, each in its own row
    assert [line.text for line in read.lines[len(lines) + len(scores) :]] == SCORES[:2]


def test_a_large_word_and_a_box_ruled_through_are_left_as_read(recognizer: object) -> None:
    # GIVEN a heading in print four times the body's size (one band), and the score column
    # with a table's rule inside its box (no blank pixel row between its rows)
    image, lines, column = _table(draw_rules=True)
    draw = ImageDraw.Draw(image)
    draw.text((300, 20), "Scores", font=ImageFont.truetype(FONT, 4 * SIZE), fill="black")
    x0, y0, x1, y1 = draw.textbbox((300, 20), "Scores", font=ImageFont.truetype(FONT, 4 * SIZE))
    heading = Line(text="Scores", box=_quad(x0 - 4, y0 - 6, x1 + 4, y1 + 6), confidence=0.99)
    ruled = Line(text="384656472", box=column, confidence=0.55)
    content = PageContent(lines=[*lines, heading, ruled])

    # WHEN stacked lines are split
    read = split_stacked_lines(content, PageImage(page=1, pixels=np.asarray(image)), recognizer)  # type: ignore[arg-type]

    # THEN nothing changes: the heading is one line, and the ruled box has no bands to read
    assert read == content
