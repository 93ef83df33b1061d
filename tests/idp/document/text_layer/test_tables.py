"""Born-digital tables read from their PDF's words and ruling lines (idp.document.text_layer
.tables, .rulings, .table_regions): the grid a reader sees, whatever the table's rules."""

from __future__ import annotations

import csv
from collections.abc import Sequence

import pypdfium2  # type: ignore[import-untyped]
import pytest

from devkit.synthetic_tables import (
    CELL_PAD_PT,
    Cell,
    Placed,
    TablePage,
    placed_page,
    table_page,
    wrapped_rows_page,
)
from idp.contract.results import TableCell
from idp.document.text_layer.extract import LayerWord, extract_text_layer
from idp.document.text_layer.rulings import extract_rulings
from idp.document.text_layer.table_alignment import aligned_tables
from idp.document.text_layer.table_grid import without_hollow_lines
from idp.document.text_layer.table_regions import ruled_tables
from idp.document.text_layer.tables import LayerTable, read_table
from tests.paths import SAMPLES

SCALE = 2.0
WIDTHS = (60.0, 220.0, 50.0, 60.0)
PARTS: list[list[str | Cell]] = [
    ["Item", "Description", "Qty", "Price"],
    [
        "A-100",
        "Steel bracket, zinc plated, with two fixing holes and a long description that wraps",
        "12",
        "4.50",
    ],
    ["B-220", "Rubber washer", "200", "0.08"],
    ["C-310", "Hinge, brass", "4", "7.25"],
    ["D-400", "Spring", "10", "1.10"],
]


def grid_of(cells: Sequence[TableCell]) -> list[list[str | None]]:
    """The cells as rows of texts, None in the slots a spanning cell covers."""
    rows = max(cell.row + cell.row_span - 1 for cell in cells)
    columns = max(cell.column + cell.column_span - 1 for cell in cells)
    grid: list[list[str | None]] = [["" for _ in range(columns)] for _ in range(rows)]
    for cell in cells:
        for r in range(cell.row, cell.row + cell.row_span):
            for c in range(cell.column, cell.column + cell.column_span):
                grid[r - 1][c - 1] = None
        grid[cell.row - 1][cell.column - 1] = cell.text
    return grid


def read(page: TablePage, *, margin: float = 40.0) -> LayerTable:
    """The table as the page path reads it from a layout region a little larger than it."""
    pdf = pypdfium2.PdfDocument(page.pdf)
    try:
        first = pdf[0]
        layer = extract_text_layer(first, scale=SCALE)
        rulings = extract_rulings(first, scale=SCALE)
    finally:
        pdf.close()
    left, top, right, bottom = (value * SCALE for value in page.box_pt)
    region = (left - margin, top - margin, right + margin, bottom + margin)
    table = read_table(region, [w for line in layer.lines for w in line.words], rulings)
    assert table is not None
    return table


@pytest.mark.parametrize("rules", ["grid", "rows", "booktabs", "none"])
def test_a_table_reads_as_its_grid_whatever_its_rules(rules: str) -> None:
    # GIVEN a table of parts with a description set on two lines, drawn with those rules
    page = table_page(PARTS, rules=rules, widths=WIDTHS)  # type: ignore[arg-type]

    # WHEN it is read from the page's words and rulings
    table = read(page)

    # THEN every cell holds its text, the wrapped description in one cell
    assert grid_of(table.cells) == page.grid
    assert table.split_words == 0


def test_the_rulings_of_a_grid_give_its_columns_and_rows() -> None:
    page = table_page(PARTS, rules="grid", widths=WIDTHS)
    table = read(page)
    assert (table.columns, table.rows) == ("rulings", "rulings")


def test_a_table_without_rules_takes_its_columns_from_its_gutters() -> None:
    page = table_page(PARTS, rules="none", widths=WIDTHS)
    table = read(page)
    assert (table.columns, table.rows) == ("gutters", "lines")


def test_a_caption_above_the_table_is_left_out_of_it() -> None:
    # GIVEN a table with a caption above it, in one layout region
    page = table_page(PARTS, rules="rows", widths=WIDTHS, caption="Table 1: parts ordered")

    # WHEN read THEN the caption is no row of the table, and its words are not the table's
    table = read(page, margin=60.0)
    assert grid_of(table.cells) == page.grid
    assert "Table" not in {word.text for word in table.words}


def test_a_cell_without_a_ruling_beside_it_spans_the_columns_of_a_ruled_grid() -> None:
    # GIVEN a ruled grid whose subtotal row is one cell over three columns
    rows: list[list[str | Cell]] = [*PARTS[:3], [Cell("Subtotal", 3), "62.00"], PARTS[3]]
    page = table_page(rows, rules="grid", widths=WIDTHS)

    # WHEN read THEN the subtotal spans the columns no ruling parts
    assert grid_of(read(page).cells) == page.grid


def test_a_cell_without_a_ruling_under_it_spans_the_rows_of_a_ruled_grid() -> None:
    # GIVEN a ruled grid whose region names two years' rows, in one cell over both
    rows: list[list[str | Cell]] = [
        ["Region", "Year", "Orders", "Sales"],
        [Cell("North", rows=2), "2023", "14", "10.50"],
        ["2024", "17", "12.25"],
        ["South", "2023", "9", "8.00"],
    ]
    page = table_page(rows, rules="grid", widths=WIDTHS)

    # WHEN read THEN the region spans the rows no ruling parts, each year its own row
    assert grid_of(read(page).cells) == page.grid


def test_a_header_across_two_columns_spans_them() -> None:
    # GIVEN an unruled table whose first header is wider than its column
    rows: list[list[str | Cell]] = [[Cell("Dimensions of the part", 2), "Qty", "Price"]]
    rows += PARTS[1:]
    page = table_page(rows, rules="none", widths=WIDTHS)

    # WHEN read THEN the header covers both columns, the body keeps them apart
    grid = grid_of(read(page).cells)
    assert grid[0][:2] == ["Dimensions of the part", None]
    assert grid[2][:2] == ["B-220", "Rubber washer"]


@pytest.mark.parametrize(
    ("sample", "region_pt"),
    [
        ("mtcars", (100, 100, 600, 560)),  # ruled between columns and under the header
        ("multicolumn", (0, 0, 425, 452)),  # no rules: two blocks side by side
    ],
)
def test_tabula_pys_tables_read_exactly(sample: str, region_pt: tuple[int, ...]) -> None:
    # GIVEN tabula-py's test PDFs and their expected CSVs
    pdf = pypdfium2.PdfDocument(str(SAMPLES / "tables" / f"{sample}.pdf"))
    first = pdf[0]
    layer = extract_text_layer(first, scale=SCALE)
    rulings = extract_rulings(first, scale=SCALE)
    pdf.close()
    truth = list(csv.reader((SAMPLES / "tables" / f"{sample}.csv").open(encoding="utf-8")))

    # WHEN the table is read from the region around it
    left, top, right, bottom = (value * SCALE for value in region_pt)
    words = [w for line in layer.lines for w in line.words]
    table = read_table((left, top, right, bottom), words, rulings)

    # THEN every cell is the expected one
    assert table is not None
    assert grid_of(table.cells) == [[value.strip() for value in row] for row in truth]


def test_a_stroked_grid_and_a_box_around_a_paragraph_are_told_apart() -> None:
    # GIVEN a page with a ruled table, and the same table's text with no rules at all
    ruled = table_page(PARTS, rules="grid", widths=WIDTHS)
    bare = table_page(PARTS, rules="none", widths=WIDTHS)

    def found(page: TablePage) -> list[tuple[float, float, float, float]]:
        pdf = pypdfium2.PdfDocument(page.pdf)
        first = pdf[0]
        layer = extract_text_layer(first, scale=SCALE)
        rulings = extract_rulings(first, scale=SCALE)
        width = first.get_size()[0] * SCALE
        pdf.close()
        return ruled_tables(rulings, [w for line in layer.lines for w in line.words], width)

    # WHEN the page's rulings are searched for tables THEN the grid is one, where it is drawn
    (box,) = found(ruled)
    left, top, right, bottom = (value * SCALE for value in ruled.box_pt)
    assert abs(box[0] - left) < 3
    assert abs(box[1] - top) < 3
    assert abs(box[2] - right) < 3
    assert abs(box[3] - bottom) < 3
    assert found(bare) == []


def _layer_words(page: TablePage) -> list[LayerWord]:
    pdf = pypdfium2.PdfDocument(page.pdf)
    try:
        layer = extract_text_layer(pdf[0], scale=SCALE)
    finally:
        pdf.close()
    return [w for line in layer.lines for w in line.words]


def test_an_unruled_table_of_values_is_found_where_it_stands() -> None:
    # GIVEN a page whose table of parts has no rules at all
    page = table_page(PARTS, rules="none", widths=WIDTHS)

    # WHEN its words are searched for columns of values
    (box,) = aligned_tables(_layer_words(page), taken=[])

    # THEN the table is found, from its header to its last row
    left, top, right, bottom = (value * SCALE for value in page.box_pt)
    assert left - 3 <= box[0] <= left + 3 * CELL_PAD_PT * SCALE
    assert top - 3 <= box[1] <= top + 3 * CELL_PAD_PT * SCALE
    assert right - WIDTHS[-1] * SCALE <= box[2] <= right + 3
    assert bottom - 3 * CELL_PAD_PT * SCALE <= box[3] <= bottom + 3


def test_two_columns_of_running_text_are_no_table() -> None:
    # GIVEN a page set in two columns of running text, words but no values
    prose = " ".join(["The committee met twice and agreed on the plan for the year."] * 6)
    page = table_page([[prose, prose]], rules="none", widths=(220.0, 220.0))

    # WHEN searched THEN no table is found, nor where the table found is already taken
    assert aligned_tables(_layer_words(page), taken=[]) == []
    parts = table_page(PARTS, rules="none", widths=WIDTHS)
    everything = (0.0, 0.0, 10_000.0, 10_000.0)
    assert aligned_tables(_layer_words(parts), taken=[everything]) == []


def read_placed(pdf: bytes) -> LayerTable:
    """The table of a page set by hand, read from a region around all its words."""
    document = pypdfium2.PdfDocument(pdf)
    try:
        layer = extract_text_layer(document[0], scale=SCALE)
        rulings = extract_rulings(document[0], scale=SCALE)
    finally:
        document.close()
    words = [word for line in layer.lines for word in line.words]
    left = min(word.box[0] for word in words) - 20
    top = min(word.box[1] for word in words) - 20
    right = max(word.box[2] for word in words) + 20
    bottom = max(word.box[3] for word in words) + 20
    table = read_table((left, top, right, bottom), words, rulings)
    assert table is not None
    return table


def test_a_currency_sign_set_apart_stays_with_its_amount() -> None:
    # GIVEN a statement whose dollar signs stand at the left of right-aligned figures, on its
    # first and total rows only, as financial statements set them
    rows = [
        ("Item", None, "2023", None, "2024"),
        ("Sales", "$", "1,200", "$", "1,450"),
        ("Costs", None, "(800)", None, "(910)"),
        ("Tax", None, "95", None, "120"),
        ("Net", "$", "305", "$", "420"),
    ]
    texts = []
    for index, (label, sign, first, sign_2, second) in enumerate(rows):
        y = 100 + 16 * index
        texts += [Placed(label, 60, y), Placed(first, 300, y, right=True)]
        texts += [Placed(second, 400, y, right=True)]
        texts += [Placed(sign, x, y) for sign, x in ((sign, 250), (sign_2, 350)) if sign]

    # WHEN read THEN each sign shares its amount's cell: three columns, not five
    assert grid_of(read_placed(placed_page(texts)).cells) == [
        ["Item", "2023", "2024"],
        ["Sales", "$ 1,200", "$ 1,450"],
        ["Costs", "(800)", "(910)"],
        ["Tax", "95", "120"],
        ["Net", "$ 305", "$ 420"],
    ]


def grouped_page() -> tuple[bytes, list[list[str | None]]]:
    """A table ruled under its header and between two groups of rows, each group's label on a
    line of its own above its rows of figures; and the grid a reader sees."""
    header = [Placed("Sex", 60, 100), Placed("Type", 140, 100)]
    header += [Placed(text, x, 100, right=True) for text, x in (("Control", 260), ("Late", 330))]
    texts, y = list(header), 100
    grid: list[list[str | None]] = [["Sex", "Type", "Control", "Late"]]
    for group in ("Male", "Female"):
        y += 20
        texts.append(Placed(group, 60, y))
        grid.append([group, "", "", ""])
        for kind, control, late in (("CC", "75", "29"), ("CT", "93", "13"), ("TT", "14", "4")):
            y += 16
            texts += [Placed(kind, 140, y), Placed(control, 260, y, right=True)]
            texts.append(Placed(late, 330, y, right=True))
            grid.append(["", kind, control, late])
    rules = [(55.0, at, 335.0, at) for at in (86.0, 105.0, 174.0, 244.0)]
    return placed_page(texts, rules), grid


def test_rules_between_groups_of_rows_part_no_row() -> None:
    # GIVEN a table whose rules part groups of rows of figures, not its rows
    pdf, grid = grouped_page()

    # WHEN read THEN every line of figures is a row: a number never wraps onto a second line
    table = read_placed(pdf)
    assert grid_of(table.cells) == grid
    assert table.rows == "lines"


def test_a_header_set_on_two_lines_is_one_row() -> None:
    # GIVEN an unruled table whose headings wrap onto two lines, set on the lower one
    texts = [Placed("Units", 250, 100, right=True), Placed("Unit", 340, 100, right=True)]
    texts += [Placed("Item", 60, 112), Placed("ordered", 250, 112, right=True)]
    texts.append(Placed("price", 340, 112, right=True))
    body = (("Bolt", "120", "0.25"), ("Nut", "80", "0.10"), ("Washer", "200", "0.05"))
    for index, (item, units, price) in enumerate(body):
        y = 130 + 14 * index
        texts += [Placed(item, 60, y), Placed(units, 250, y, right=True)]
        texts.append(Placed(price, 340, y, right=True))

    # WHEN read THEN the header is one row, each heading's two lines in one cell
    assert grid_of(read_placed(placed_page(texts)).cells) == [
        ["Item", "Units ordered", "Unit price"],
        ["Bolt", "120", "0.25"],
        ["Nut", "80", "0.10"],
        ["Washer", "200", "0.05"],
    ]


def test_a_header_under_spanning_headings_is_one_row_with_its_units() -> None:
    # GIVEN a table of two days' figures: a heading over each day's two columns, the column
    # headings wrapped onto two lines, then a line of units
    texts = [Placed("Postnatal Day 1", 182, 100), Placed("Postnatal Day 7", 322, 100)]
    rights = (200, 270, 340, 410)
    for y, label, cells in (
        (112, None, ("Body", "Weight", "Body", "Weight")),
        (124, "Dose", ("weight", "change", "weight", "change")),
        (136, "(ppm)", ("(g)", "(%)", "(g)", "(%)")),
        (152, "0", ("5.8", "100", "8.8", "100")),
        (164, "250", ("5.9", "102", "9.0", "102")),
        (176, "500", ("6.0", "103", "8.6", "98")),
    ):
        texts += [Placed(label, 60, y)] if label else []
        texts += [Placed(text, x, y, right=True) for text, x in zip(cells, rights, strict=True)]

    # WHEN read THEN the spanning headings keep their row, and the headings under them, with
    # their units, make one row
    grid = grid_of(read_placed(placed_page(texts)).cells)
    assert grid[:2] == [
        ["", "Postnatal Day 1", None, "Postnatal Day 7", None],
        [
            "Dose (ppm)",
            "Body weight (g)",
            "Weight change (%)",
            "Body weight (g)",
            "Weight change (%)",
        ],
    ]
    assert grid[2:] == [
        ["0", "5.8", "100", "8.8", "100"],
        ["250", "5.9", "102", "9.0", "102"],
        ["500", "6.0", "103", "8.6", "98"],
    ]


def _cell(row: int, column: int, text: str = "", span: int = 1) -> TableCell:
    return TableCell(row=row, column=column, column_span=span, text=text)


def test_a_column_with_no_text_of_its_own_goes_unless_it_is_a_blank_field() -> None:
    # GIVEN grids whose rulings cut a column that holds no text: the gap between cells drawn
    # as boxes, a label's column cut by a header's rule, and a form's blank fields
    gap = [_cell(1, 1, "Faculty"), _cell(1, 2), _cell(1, 3, "Size")]
    gap += [_cell(2, 1, "Sciences"), _cell(2, 2), _cell(2, 3, "1269")]
    under_label = [_cell(1, 1, "State", span=2), _cell(1, 3, "n")]
    under_label += [_cell(2, 1, "Kerala", span=2), _cell(2, 3, "2400")]
    form = [_cell(1, 1, "Phone:"), _cell(1, 2), _cell(1, 3, "Fax:"), _cell(1, 4)]
    form += [_cell(2, 1, "Email:"), _cell(2, 2, span=3)]

    # WHEN their hollow columns are dropped THEN the gap and the cut go, the fields stay
    assert grid_of(without_hollow_lines(gap)) == [["Faculty", "Size"], ["Sciences", "1269"]]
    assert grid_of(without_hollow_lines(under_label)) == [["State", "n"], ["Kerala", "2400"]]
    assert grid_of(without_hollow_lines(form)) == grid_of(form)


def test_rows_read_from_lines_against_the_rules_are_told() -> None:
    # GIVEN a table whose rules part its rows, with wrapped labels that make its bands read
    # as several rows each
    table = read_placed(wrapped_rows_page())

    # WHEN read THEN its rows come from its lines, and the table says they disagree with its
    # rules; rules that part groups of rows of figures (grouped_page) say nothing
    assert table.rows == "lines"
    assert table.rows_unlike_rulings
    assert not read_placed(grouped_page()[0]).rows_unlike_rulings
