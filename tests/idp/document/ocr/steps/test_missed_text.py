"""Text the detector passed over, read by the recognizer alone (idp.document.ocr.steps.missed_text).

The page is drawn here, so where every glyph stands is known; the lines are what PP-OCRv5's
detector returned on lme4's JSS paper, p10 (benchmarks/held_out_numbers.py): a printed sparse
matrix whose rows were found only as far as their labels ("[2,] 1", "[4,]"), the lone "1"s
after a wide gap left out. The recognizer is PP-OCRv5's own, on the offline weights.
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
from idp.document.ocr.steps.missed_text import read_missed_text

pytestmark = pytest.mark.ocr

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
SIZE = 28  # px: 10-pt type at 200 dpi
ROW = 48


def _page(rows: list[list[tuple[int, str]]]) -> tuple[Image.Image, list[list[Quad]]]:
    """A white page with each row's pieces of text at their x; every piece's box."""
    image = Image.new("RGB", (1200, 120 + ROW * len(rows)), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, SIZE)
    boxes = []
    for number, row in enumerate(rows):
        y = 60 + ROW * number
        mine = []
        for x, text in row:
            draw.text((x, y), text, font=font, fill="black")
            x0, y0, x1, y1 = draw.textbbox((x, y), text, font=font)
            mine.append(((x0 - 4, y0 - 8), (x1 + 4, y0 - 8), (x1 + 4, y1 + 8), (x0 - 4, y1 + 8)))
        boxes.append(mine)
    return image, boxes


def _line(text: str, box: Quad) -> Line:
    return Line(text=text, box=box, confidence=0.97)


# R's print of a 6 × 6 sparse matrix, each row's label and its cells at their columns.
MATRIX = [
    [(40, "[1,]"), (180, "1"), (260, "-1"), (360, "."), (440, "."), (520, "."), (600, ".")],
    [(40, "[2,]"), (180, "1"), (280, "1"), (360, "."), (440, "."), (520, "."), (600, ".")],
    [(40, "[3,]"), (180, "."), (260, "."), (360, "1"), (440, "-1"), (520, "."), (600, ".")],
    [(40, "[4,]"), (180, "."), (260, "."), (360, "1"), (460, "1"), (520, "."), (600, ".")],
]


@pytest.fixture(scope="module")
def recognizer(registry: EngineRegistry) -> object:
    return registry.get(OcrModel.PP_OCRV5, "en", JobOptions()).engine


def test_lone_digits_in_a_found_row_are_read_and_its_dots_are_not(recognizer: object) -> None:
    # GIVEN a printed sparse matrix whose rows the detector found only as far as their labels
    image, boxes = _page(MATRIX)
    found = [_line("[1,] 1", _span(boxes[0][0], boxes[0][1]))]
    found += [_line(row[0][1], boxes[number][0]) for number, row in enumerate(MATRIX[1:], 1)]
    content = PageContent(lines=found)

    # WHEN what the detector passed over is read
    read = read_missed_text(content, PageImage(page=1, pixels=np.asarray(image)), recognizer)  # type: ignore[arg-type]

    # THEN the lines found are kept as they were, and each missed digit comes back in its row
    assert read.lines[: len(found)] == found
    added = read.lines[len(found) :]
    by_row = {row: sorted(line.text for line in added if _row_of(line) == row) for row in range(4)}
    assert by_row == {0: ["-1"], 1: ["1", "1"], 2: ["-1", "1"], 3: ["1", "1"]}, by_row
    # and each new line carries its words, boxed inside it
    for line in added:
        assert " ".join(word.text for word in line.words) == line.text
        assert all(word.confidence == line.confidence for word in line.words)


def test_ink_outside_every_row_and_a_page_read_whole_are_left_alone(recognizer: object) -> None:
    # GIVEN rows read whole, and a digit and a circle standing in no row of the page
    image, boxes = _page([[(40, "Total 17")], [(40, "Items 4")], [(40, "Paid 21")], []])
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, SIZE)
    draw.text((700, 60 + ROW * 3 + 10), "8", font=font, fill="black")  # below the last row
    draw.ellipse((900, 60, 916, 76), outline="black", width=3)  # a chart's marker, in a row
    lines = [
        _line(text, row[0])
        for text, row in zip(["Total 17", "Items 4", "Paid 21"], boxes[:3], strict=True)
    ]
    content = PageContent(lines=lines)

    # WHEN what the detector passed over is read
    read = read_missed_text(content, PageImage(page=1, pixels=np.asarray(image)), recognizer)  # type: ignore[arg-type]

    # THEN the "8" in no line's row is not read, nor the marker as a letter or a digit
    assert [line.text for line in read.lines] == ["Total 17", "Items 4", "Paid 21"]


def test_a_lone_digit_is_read_where_the_next_rows_box_reaches_up_to_it(
    recognizer: object,
) -> None:
    # GIVEN a table row "9 6 M" whose "6" the detector passed over, and the next row's cells in
    # a box that reaches up into it (the xtable Gallery, p17: "10 7" boxed taller than its row)
    image, boxes = _page([[(40, "9"), (120, "6"), (200, "M")], [(40, "10"), (120, "7")]])
    six = boxes[0][1]
    glyph_bottom = six[2][1] - 8  # _page pads each box 8 px beyond its glyphs
    (x0, _), _, (x1, y1), _ = _span(boxes[1][0], boxes[1][1])
    reaching = ((x0, glyph_bottom - 3), (x1, glyph_bottom - 3), (x1, y1), (x0, y1))
    lines = [_line("9", boxes[0][0]), _line("M", boxes[0][2]), _line("10 7", reaching)]

    # WHEN what the detector passed over is read
    read = read_missed_text(
        PageContent(lines=lines),
        PageImage(page=1, pixels=np.asarray(image)),
        recognizer,  # type: ignore[arg-type]
    )

    # THEN the "6", mostly outside the taller box, comes back in its own row
    assert [line.text for line in read.lines] == ["9", "M", "10 7", "6"]
    assert _row_of(read.lines[-1]) == 0


def _span(first: Quad, last: Quad) -> Quad:
    (x0, y0), _, (x1, y1), _ = first[0], first[1], last[2], last[3]
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def _row_of(line: Line) -> int:
    centre = sum(y for _, y in line.box) / 4
    return round((centre - 60 - SIZE / 2) / ROW)
