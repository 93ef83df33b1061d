"""PP-StructureV3's offline table stand-ins (idp.document.ocr.paddle.table_grids): tables found on a
page by their ruling lines, a table region cut into cells by its lines or its text's alignment,
and the layout's regions rearranged around a found table. Real img2table on drawn pages."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from idp.document.ocr.paddle import layout, table_grids

FONT = ImageFont.load_default(size=22)
TABLE = layout.CDLA_LABELS.index("table")
FIGURE = layout.CDLA_LABELS.index("figure")
TEXT = layout.CDLA_LABELS.index("text")


def _page() -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = Image.new("L", (1240, 1754), 255)
    draw = ImageDraw.Draw(image)
    for n, y in enumerate(range(120, 330, 36)):  # a paragraph above the table
        draw.text((120, y), f"Line {n} of the paragraph that runs above the table here.", 0, FONT)
    return image, draw


ROWS = [["Region", "Units", "Revenue"]] + [
    [f"Area {n}", str(120 + 7 * n), f"{1000 + 37 * n}.50"] for n in range(1, 6)
]
COLUMNS = (150, 450, 750, 1050)  # the grid's vertical lines
TOP, ROW = 420, 60  # its first horizontal line, and each row's height


def _ruled_table(draw: ImageDraw.ImageDraw) -> None:
    for r in range(len(ROWS) + 1):
        draw.line([(COLUMNS[0], TOP + r * ROW), (COLUMNS[-1], TOP + r * ROW)], 0, 3)
    for x in COLUMNS:
        draw.line([(x, TOP), (x, TOP + len(ROWS) * ROW)], 0, 3)
    _fill(draw)


def _fill(draw: ImageDraw.ImageDraw) -> None:
    for r, row in enumerate(ROWS):
        for c, text in enumerate(row):
            draw.text((COLUMNS[c] + 20, TOP + r * ROW + 17), text, 0, FONT)


def _grey(image: Image.Image) -> np.ndarray:
    return np.asarray(image, dtype=np.uint8)


def _inside(inner: tuple[float, ...], outer: tuple[float, ...]) -> bool:
    left, top, right, bottom = outer
    return left <= inner[0] and top <= inner[1] and inner[2] <= right and inner[3] <= bottom


def test_a_ruled_grid_is_found_on_the_page_and_read_as_its_cells() -> None:
    # GIVEN a page with a paragraph and a fully ruled 6 x 3 table below it
    image, draw = _page()
    _ruled_table(draw)
    grid = (COLUMNS[0], TOP, COLUMNS[-1], TOP + len(ROWS) * ROW)

    # WHEN the page is searched for tables
    (found,) = table_grids.find(_grey(image))

    # THEN the grid is found as a bordered table, with a margin round its rules, and the
    # paragraph is not part of it
    assert found.kind == "bordered"
    assert _inside(grid, found.box)
    assert found.box[1] > 330

    # AND the table region's cells are the 18 its lines enclose, in 6 rows and 3 columns
    x0, y0, x1, y1 = (int(v) for v in found.box)
    cells = table_grids.cells(_grey(image)[y0:y1, x0:x1])
    assert len(cells) == 18
    assert len({round(cell[1]) for cell in cells}) == 6
    assert len({round(cell[0]) for cell in cells}) == 3


def test_three_rules_of_one_span_are_a_booktabs_table_read_by_its_columns_of_text() -> None:
    # GIVEN a table ruled as LaTeX's booktabs rules it: above the header, under it and below
    image, draw = _page()
    bottom = TOP + len(ROWS) * ROW
    for y in (TOP - 4, TOP + ROW - 4, bottom):
        draw.line([(COLUMNS[0], y), (COLUMNS[-1], y)], 0, 2)
    _fill(draw)

    # WHEN the page is searched
    (found,) = table_grids.find(_grey(image))

    # THEN the rules make one booktabs table from the top rule to the bottom one
    assert found.kind == "booktabs"
    assert _inside((COLUMNS[0], TOP - 4, COLUMNS[-1], bottom), found.box)

    # AND its cells come from the text's alignment: three columns, a row per line of text
    x0, y0, x1, y1 = (int(v) for v in found.box)
    cells = table_grids.cells(_grey(image)[y0:y1, x0:x1])
    assert len({round(cell[0]) for cell in cells}) == 3
    assert len({round(cell[1]) for cell in cells}) == len(ROWS)


def test_a_box_with_a_rule_under_its_header_is_cut_by_its_text_into_rows_and_columns() -> None:
    # GIVEN a boxed table whose only inner rules are under the header and after the first column
    image, draw = _page()
    bottom = TOP + len(ROWS) * ROW
    draw.rectangle([COLUMNS[0], TOP, COLUMNS[-1], bottom], outline=0, width=3)
    draw.line([(COLUMNS[0], TOP + ROW), (COLUMNS[-1], TOP + ROW)], 0, 3)
    draw.line([(COLUMNS[1], TOP), (COLUMNS[1], bottom)], 0, 3)
    _fill(draw)

    # WHEN the table region is cut into cells
    crop = _grey(image)[TOP - 20 : bottom + 20, COLUMNS[0] - 20 : COLUMNS[-1] + 20]
    cells = table_grids.cells(crop)

    # THEN it has a row per line of text, not the two rows its rules make, and three columns
    assert len({round(cell[1]) for cell in cells}) == len(ROWS)
    assert len({round(cell[0]) for cell in cells}) == 3


def test_prose_under_a_page_rule_holds_no_table() -> None:
    # GIVEN a page of prose with a rule under its running head
    image, draw = _page()
    draw.line([(120, 90), (1120, 90)], 0, 2)
    for n, y in enumerate(range(400, 900, 36)):
        draw.text((120, y), f"More running text, line {n}, with words of every length.", 0, FONT)

    # THEN nothing on it is a table, and a region of it has no grid
    assert table_grids.find(_grey(image)) == []
    assert table_grids.cells(_grey(image)[380:900, 100:1140]) == []


def _rows(*rows: list[float]) -> np.ndarray:
    return np.array(rows, dtype=np.float32)


FOUND = table_grids.FoundTable((100.0, 500.0, 900.0, 800.0), "bordered")


@pytest.mark.parametrize(
    ("regions", "placed"),
    [
        pytest.param(
            # a paragraph above the table and two text regions inside it: the paragraph stays
            # and the table replaces the regions inside it
            [
                [TEXT, 0.9, 100, 100, 900, 400],
                [TEXT, 0.8, 120, 520, 880, 600],
                [TEXT, 0.7, 120, 650, 880, 780],
            ],
            [
                [TEXT, pytest.approx(0.9), 100, 100, 900, 400],
                [TABLE, pytest.approx(table_grids.FOUND_SCORE), 100, 500, 900, 800],
            ],
            id="the-regions-inside-it-go",
        ),
        pytest.param(
            # a figure region over a chart and the table below it: the figure keeps its part
            # above the table (the strip below is too low to keep)
            [[FIGURE, 0.6, 80, 100, 920, 820]],
            [
                [FIGURE, pytest.approx(0.6), 80, 100, 920, 500],
                [TABLE, pytest.approx(table_grids.FOUND_SCORE), 100, 500, 900, 800],
            ],
            id="a-figure-over-half-the-page-is-cut-around-it",
        ),
        pytest.param(
            # the layout model's own table candidate, below PaddleX's threshold: one table, on
            # the found box, that PaddleX will keep
            [[TABLE, 0.43, 90, 450, 910, 810]],
            [[TABLE, pytest.approx(table_grids.FOUND_SCORE), 100, 500, 900, 800]],
            id="a-weak-layout-table-takes-the-found-box-and-score",
        ),
    ],
)
def test_a_found_table_is_placed_among_the_layout_regions(
    regions: list[list[float]], placed: list[list[object]]
) -> None:
    # GIVEN the layout model's regions on a page where a table was found by its lines
    rows = _rows(*regions)
    # WHEN the found table is placed among them
    # THEN the regions are those the case names, the found table's among them
    assert table_grids.place(rows, [FOUND], table_label=TABLE).tolist() == placed


def _negative_page(kind: str) -> Image.Image:
    image, draw = _page()
    if kind == "ruled paper":  # text written on evenly spaced lines
        for n, y in enumerate(range(420, 1400, 56)):
            draw.line([(120, y), (1120, y)], 0, 2)
            draw.text((130, y - 30), f"Note {n}: written on the line of a ruled page.", 0, FONT)
    elif kind == "form lines":  # fill-in lines of a form, labels before them
        for n, label in enumerate(("Name", "Address", "City", "Postcode", "Telephone")):
            y = 460 + 70 * n
            draw.text((130, y - 28), label, 0, FONT)
            draw.line([(330, y), (1120, y)], 0, 2)
    elif kind == "callout box":  # a boxed note with a rule under its heading
        draw.rectangle([150, 420, 1100, 900], outline=0, width=3)
        draw.line([(150, 480), (1100, 480)], 0, 3)
        draw.text((180, 440), "Note", 0, FONT)
        for n, y in enumerate(range(510, 860, 36)):
            draw.text((180, y), f"Running prose inside the box, line {n}, no columns.", 0, FONT)
    return image


@pytest.mark.parametrize("kind", ["ruled paper", "form lines", "callout box"])
def test_rules_that_are_not_a_table_s_find_no_table(kind: str) -> None:
    # GIVEN a page of evenly spaced rules or a box with a rule under its heading
    image = _negative_page(kind)
    # THEN no table is found on it
    assert table_grids.find(_grey(image)) == []


def test_a_slot_with_no_area_is_no_cell() -> None:
    from img2table.tables.types import Cell, Row, Table

    # GIVEN an img2table grid with a zero-width slot between two rules drawn side by side
    grid = Table(
        rows=[
            Row(cells=[Cell(0, 0, 10, 10), Cell(10, 0, 10, 10), Cell(10, 0, 30, 10)]),
            Row(cells=[Cell(0, 10, 10, 20), Cell(10, 10, 10, 20), Cell(10, 10, 30, 20)]),
        ]
    )

    # WHEN its cells are taken THEN the slot is none of them (PaddleX divides by a cell's area)
    assert table_grids.grid_boxes(grid) == [
        (0.0, 0.0, 10.0, 10.0),
        (10.0, 0.0, 30.0, 10.0),
        (0.0, 10.0, 10.0, 20.0),
        (10.0, 10.0, 30.0, 20.0),
    ]
