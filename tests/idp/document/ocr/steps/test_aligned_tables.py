"""Tables the layout model missed on a scan, found from the OCR lines' alignment."""

from __future__ import annotations

from typing import Any

from idp.contract.results import Line, Quad, ReviewReason
from idp.document.ocr.paddle.output import ALIGNED_TABLE_STAGE, structure_page_content
from idp.document.ocr.steps.aligned_tables import with_aligned_tables
from idp.document.ocr.steps.regions import Region

ROWS = [
    ["Item", "Quantity", "Price"],
    ["Steel bracket", "12", "4.50"],
    ["Rubber washer", "200", "0.08"],
    ["Brass hinge", "4", "7.25"],
    ["Copper pipe", "30", "12.00"],
]
COLUMNS = [100, 600, 900]  # each column's left edge, in pixels
ROW_TOP = 300
ROW_PITCH = 40
HEIGHT = 24  # a line's height: the rows are a line apart


def _quad(left: float, top: float, right: float, bottom: float) -> Quad:
    return ((left, top), (right, top), (right, bottom), (left, bottom))


def _line(text: str, left: float, top: float) -> Line:
    """An OCR line as the structure path has it: a box and its text, no word boxes."""
    return Line(
        text=text, box=_quad(left, top, left + 13 * len(text), top + HEIGHT), confidence=0.95
    )


def _page() -> tuple[list[Line], Quad]:
    """A paragraph, then a price list with no rules, then a paragraph: the layout's one text
    region holds all of it."""
    lines = [
        _line("The parts below were ordered for the spring overhaul of the", 100, 200),
        _line("pumping station and arrive in one delivery next week.", 100, 240),
    ]
    for number, row in enumerate(ROWS):
        lines += [
            _line(text, left, ROW_TOP + number * ROW_PITCH)
            for text, left in zip(row, COLUMNS, strict=True)
        ]
    bottom = ROW_TOP + len(ROWS) * ROW_PITCH + 20
    lines.append(_line("Prices are per piece and exclude the delivery charge.", 100, bottom))
    return lines, _quad(90, 190, 1100, bottom + HEIGHT + 10)


def _cells(region: Region) -> list[list[str]]:
    from idp.document.ocr.steps.tables import cells_of_html

    cells = cells_of_html(region.html or "", region.cell_boxes)
    rows = max(cell.row for cell in cells)
    return [[c.text for c in cells if c.row == row] for row in range(1, rows + 1)]


def test_aligned_values_in_a_text_region_become_a_table_after_its_paragraph() -> None:
    # GIVEN a price list the layout model took for part of a paragraph
    lines, box = _page()
    regions = [Region(label="doc_title", box=_quad(100, 100, 700, 150)), Region("text", box)]

    # WHEN tables are sought in its lines' alignment
    found, added = with_aligned_tables(regions, lines)

    # THEN the list is a table of its rows and columns, read in place after the paragraph
    assert added == 1
    assert [r.label for r in found] == ["doc_title", "text", "table"]
    assert _cells(found[2]) == ROWS


def test_no_table_is_sought_in_a_figure_nor_in_prose() -> None:
    # GIVEN the same rows inside a figure (a chart's labels), and two columns of running text
    lines, box = _page()
    in_figure, _ = with_aligned_tables([Region("image", box)], lines)
    prose = [
        _line(text, left, 200 + 40 * row)
        for row in range(6)
        for text, left in (("the pumps were cleaned and", 100), ("then the valves were set", 700))
    ]
    in_prose, added = with_aligned_tables([Region("text", _quad(90, 190, 1100, 460))], prose)

    # THEN neither gives a table: a column of values makes one
    assert [r.label for r in in_figure] == ["image"]
    assert (added, [r.label for r in in_prose]) == (0, ["text"])


def _ocr(lines: list[Line]) -> dict[str, Any]:
    points = [[list(point) for point in line.box] for line in lines]
    return {
        "rec_texts": [line.text for line in lines],
        "rec_scores": [line.confidence for line in lines],
        "rec_polys": points,
        "rec_boxes": [[*line.box[0], *line.box[2]] for line in lines],
    }


def test_a_scanned_page_with_a_missed_table_gets_its_cells_and_goes_to_review() -> None:
    # GIVEN PP-StructureV3's result for the page: one text region over the paragraphs and list
    lines, box = _page()
    (left, top), _, (right, bottom), _ = box
    result = {
        "parsing_res_list": [
            {
                "block_label": "text",
                "block_content": "…",
                "block_bbox": [left, top, right, bottom],
                "block_id": 0,
                "block_order": 1,
            }
        ],
        "overall_ocr_res": _ocr(lines),
        "table_res_list": [],
    }

    # WHEN it becomes the page's content
    content = structure_page_content(result, 1200, 800)

    # THEN the list is a table block with its cells, between the paragraphs' text
    (table,) = [block for block in content.blocks if block.type == "table"]
    assert [[c.text for c in table.cells if c.row == r] for r in range(1, 6)] == ROWS
    assert "| Rubber washer | 200 | 0.08 |" in (content.markdown or "")
    # AND the page says how the table was found, and doubts it: the layout model missed it
    assert ALIGNED_TABLE_STAGE in content.stages
    assert content.doubts == [ReviewReason.TABLE_MISSED]
