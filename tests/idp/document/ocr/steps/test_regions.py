"""A layout model's regions as the page's blocks: tables read into cells, lines put in the layout's
order, typed blocks and the page's Markdown; and the verdict on a page whose layout failed.
No engine: regions and lines as PP-StructureV3 returns them."""

from __future__ import annotations

import numpy as np

from idp.contract.results import Line, Quad, ReviewReason
from idp.document.ocr.engine import PageContent
from idp.document.ocr.steps.quality import assess_page
from idp.document.ocr.steps.regions import (
    Region,
    block_type,
    lay_out,
    page_markdown,
    paragraph_text,
)
from idp.document.ocr.steps.tables import cells_of_html, grid_size, markdown_table


def box(x0: float, y0: float, x1: float, y1: float) -> Quad:
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def line(text: str, x0: float, y0: float, x1: float, y1: float) -> Line:
    return Line(text=text, box=box(x0, y0, x1, y1), confidence=0.99)


SPANNING = (
    "<table><tr><td rowspan='2'>Year</td><td colspan='2'>Sales</td></tr>"
    "<tr><td>EU</td><td>US</td></tr>"
    "<tr><td>2024</td><td>1,284.50</td><td>9&amp;1</td></tr></table>"
)


def test_a_table_s_cells_take_their_places_past_the_cells_spanning_into_them() -> None:
    # WHEN a table with a row span and a column span is read
    cells = cells_of_html(SPANNING)

    # THEN each cell sits where the grid puts it, with its spans and unescaped text
    assert [(c.row, c.column, c.row_span, c.column_span, c.text) for c in cells] == [
        (1, 1, 2, 1, "Year"),
        (1, 2, 1, 2, "Sales"),
        (2, 2, 1, 1, "EU"),
        (2, 3, 1, 1, "US"),
        (3, 1, 1, 1, "2024"),
        (3, 2, 1, 1, "1,284.50"),
        (3, 3, 1, 1, "9&1"),
    ]
    assert grid_size(cells) == (3, 3)


def test_a_table_becomes_a_markdown_table_with_its_first_row_as_header() -> None:
    # WHEN the spanning table is written as Markdown
    table = markdown_table(cells_of_html(SPANNING))

    # THEN it is a pipe table, a span's text in its first place
    assert table.splitlines() == [
        "| Year | Sales |  |",
        "|---|---|---|",
        "|  | EU | US |",
        "| 2024 | 1,284.50 | 9&1 |",
    ]


def _page() -> tuple[list[Region], list[Line]]:
    # A title, a two-row table whose lines the detector found in another order, a figure, a
    # footer, and a stray line outside every region.
    cell_boxes = [
        box(100, 200, 300, 240),
        box(300, 200, 500, 240),
        box(100, 240, 300, 280),
        box(300, 240, 500, 280),
    ]
    regions = [
        Region(label="doc_title", box=box(100, 50, 500, 100), text="Annual report"),
        Region(
            label="table",
            box=box(100, 200, 500, 280),
            html="<table><tr><td>Item</td><td>Price</td></tr>"
            "<tr><td>Coffee</td><td>12.50</td></tr></table>",
            cell_boxes=cell_boxes,
        ),
        Region(label="image", box=box(100, 300, 500, 500)),
        Region(label="footer", box=box(100, 900, 500, 930), text="Page 1"),
    ]
    lines = [
        line("12.50", 310, 245, 380, 275),
        line("Price", 310, 205, 380, 235),
        line("Annual report", 110, 55, 400, 95),
        line("Coffee", 110, 245, 200, 275),
        line("Item", 110, 205, 160, 235),
        line("Page 1", 110, 905, 200, 925),
        line("stray note", 600, 950, 700, 970),
    ]
    return regions, lines


def test_lines_are_read_region_by_region_and_a_table_cell_by_cell() -> None:
    # GIVEN a page's regions and its lines in the detector's order
    regions, lines = _page()

    # WHEN it is laid out
    page = lay_out(regions, lines)

    # THEN the lines follow the regions, the table row by row, the stray line last
    assert [line.text for line in page.lines] == [
        "Annual report",
        "Item",
        "Price",
        "Coffee",
        "12.50",
        "Page 1",
        "stray note",
    ]
    assert [(b.type, b.label, b.lines) for b in page.blocks] == [
        ("title", "doc_title", [0]),
        ("table", "table", [1, 2, 3, 4]),
        ("figure", "image", []),
        ("footer", "footer", [5]),
        ("text", None, [6]),
    ]
    table = page.blocks[1]
    assert [(c.row, c.column, c.text) for c in table.cells] == [
        (1, 1, "Item"),
        (1, 2, "Price"),
        (2, 1, "Coffee"),
        (2, 2, "12.50"),
    ]


def test_the_page_markdown_has_headings_tables_and_no_figures_headers_or_footers() -> None:
    # WHEN the page's Markdown is written
    regions, lines = _page()
    markdown = lay_out(regions, lines).markdown

    # THEN the title is a heading, the table a Markdown table, the footer left out
    assert markdown.split("\n\n") == [
        "# Annual report",
        "| Item | Price |\n|---|---|\n| Coffee | 12.50 |",
        "stray note",
    ]


def test_a_text_region_of_list_items_is_a_list() -> None:
    items = [line(text, 0, 20 * n, 100, 20 * n + 15) for n, text in enumerate(["• one", "• two"])]
    prose = [line("A sentence", 0, 0, 100, 15), line("goes on.", 0, 20, 100, 35)]
    assert block_type("text", items) == "list"
    assert block_type("text", prose) == "text"
    assert block_type("paragraph_title", items) == "title"


def test_a_section_title_is_a_second_level_heading() -> None:
    regions = [Region(label="paragraph_title", box=box(0, 0, 100, 20), text="Results")]
    assert page_markdown(lay_out(regions, []).blocks) == "## Results"


def _inked_page() -> np.ndarray:
    pixels = np.full((400, 400, 3), 255, dtype=np.uint8)
    for row in range(40, 360, 40):
        pixels[row : row + 14, 40:360:6] = 0  # rows of glyph-like marks
    return pixels


def test_a_page_with_ink_where_the_layout_model_found_no_region_is_for_review() -> None:
    # GIVEN a page with ink on which a layout model found nothing
    content = PageContent(lines=[], blocks=[], layout_regions=0)

    # WHEN it is assessed
    quality = assess_page(_inked_page(), content, None)

    # THEN it goes to review, saying so
    assert quality.verdict == "review"
    assert ReviewReason.NO_LAYOUT_FOUND in quality.reasons


def test_a_table_region_that_came_back_without_cells_is_for_review() -> None:
    # GIVEN a page whose table region's structure came back empty
    regions = [Region(label="table", box=box(0, 0, 400, 400), html="<table></table>")]
    laid = lay_out(regions, [line("Total 12", 40, 40, 360, 54)])
    content = PageContent(lines=laid.lines, blocks=laid.blocks, layout_regions=1)

    # WHEN it is assessed
    quality = assess_page(_inked_page(), content, None)

    # THEN the table is for review
    assert ReviewReason.TABLE_NOT_READ in quality.reasons


def test_a_table_whose_cells_hold_no_text_is_for_review() -> None:
    # GIVEN a page whose table region came back as a grid of empty cells
    html = "<table><tr><td></td><td></td></tr><tr><td></td><td></td></tr></table>"
    regions = [Region(label="table", box=box(0, 0, 400, 400), html=html)]
    laid = lay_out(regions, [line("Total 12", 40, 40, 360, 54)])
    content = PageContent(lines=laid.lines, blocks=laid.blocks, layout_regions=1)
    assert laid.blocks[0].cells  # the grid is there, its cells empty

    # THEN the table is for review, as not read
    assert ReviewReason.TABLE_NOT_READ in assess_page(_inked_page(), content, None).reasons


def test_a_text_line_page_is_never_judged_by_layout() -> None:
    # GIVEN a text-line model's page (no layout model ran, blocks without labels)
    laid = lay_out([], [line("Hello", 40, 40, 360, 54)])
    content = PageContent(lines=laid.lines, blocks=[], layout_regions=None)

    # THEN no layout reason is given
    quality = assess_page(_inked_page(), content, None)
    assert not {ReviewReason.NO_LAYOUT_FOUND, ReviewReason.TABLE_NOT_READ} & set(quality.reasons)


def test_a_region_s_lines_read_as_running_text() -> None:
    assert (
        paragraph_text(["the throne of England;", "there were a king. Spiritual reve-", "lations"])
        == "the throne of England; there were a king. Spiritual revelations"
    )
    assert paragraph_text(["seventy-", "Five", "中文", "文本"]) == "seventy- Five 中文文本"
