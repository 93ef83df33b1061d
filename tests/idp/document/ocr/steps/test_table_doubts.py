"""Tables the pipeline doubts go to review (idp.document.ocr.steps.table_doubts, and the layer
check of steps.born_digital): each reason on a page that has it, and not on one that does not."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest

from devkit.synthetic_tables import misread_table_page, wrapped_rows_page
from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.contract.results import Block, Line, Quad, ReviewReason, TableCell, Word
from idp.document.ocr.engine import PageContent
from idp.document.ocr.pipeline import ocr_document
from idp.document.ocr.registry import EngineRegistry
from idp.document.ocr.steps.table_doubts import table_doubts
from idp.document.text_layer.page import page_layer


def box(left: float, top: float, right: float, bottom: float) -> Quad:
    return ((left, top), (right, top), (right, bottom), (left, bottom))


def line(text: str, left: float, top: float, *, width: float = 60.0) -> Line:
    """A line of one word per token, each token `width` wide, 20 apart."""
    words = []
    x = left
    for token in text.split():
        words.append(Word(text=token, box=box(x, top, x + width, top + 16)))
        x += width + 20
    return Line(text=text, box=box(left, top, x - 20, top + 16), confidence=0.99, words=words)


def grid(rows: int, columns: int, *, left: float = 0, width: float = 100) -> list[TableCell]:
    return [
        TableCell(
            row=r + 1,
            column=c + 1,
            text="x",
            box=box(left + c * width, r * 30, left + (c + 1) * width, (r + 1) * 30),
        )
        for r in range(rows)
        for c in range(columns)
    ]


def page(blocks: Sequence[tuple[str, list[Line], list[TableCell]]]) -> PageContent:
    lines: list[Line] = []
    made = []
    for kind, own, cells in blocks:
        first = len(lines)
        lines += own
        made.append(
            Block(
                type=kind,
                box=box(0, 0, 400, 200),
                lines=list(range(first, len(lines))),
                cells=cells,
            )
        )
    return PageContent(lines=lines, blocks=made)


def test_a_line_across_two_cells_is_text_the_grid_splits() -> None:
    # GIVEN a two-column grid, and a line of text that lies across both of its first row's cells
    across = [line("total 12", 40, 7, width=50)]
    inside = [line("total", 10, 7, width=50)]
    cells = grid(3, 2)

    # THEN the first table is doubtful for it, the second (its line in one cell) is not
    assert ReviewReason.TABLE_TEXT_SPLIT in table_doubts(page([("table", across, cells)]))
    assert ReviewReason.TABLE_TEXT_SPLIT not in table_doubts(page([("table", inside, cells)]))


def test_a_row_with_fewer_cells_than_the_grid_has_cells_missing() -> None:
    # GIVEN a 3 x 2 grid whose second row lacks its second cell
    full = grid(3, 2)
    holed = [cell for cell in full if (cell.row, cell.column) != (2, 2)]

    # THEN only the holed grid is doubtful for it
    assert ReviewReason.TABLE_CELLS_MISSING in table_doubts(page([("table", [], holed)]))
    assert ReviewReason.TABLE_CELLS_MISSING not in table_doubts(page([("table", [], full)]))


@pytest.mark.parametrize(("rows", "columns"), [(1, 4), (5, 1)])
def test_a_table_of_one_row_or_one_column_is_a_fragment(rows: int, columns: int) -> None:
    # GIVEN a table of one row (or one column), and the same cells' count as a 2 x 2 grid
    thin = grid(rows, columns)

    # THEN only the thin one is doubtful, as a fragment of a table
    assert ReviewReason.TABLE_FRAGMENT in table_doubts(page([("table", [], thin)]))
    assert table_doubts(page([("table", [], grid(2, 2))])) == set()


def cell_lines(tokens: Sequence[str], top: float, xs: Sequence[float]) -> list[Line]:
    """One line a token, each 40 px wide at its x: a row as a table model reads it, cell by cell."""
    return [line(token, x, top, width=40) for token, x in zip(tokens, xs, strict=True)]


def test_a_grid_whose_text_shows_a_column_it_lacks_is_misaligned() -> None:
    # GIVEN text aligned in three columns (at x 10, 70 and 140), a grid of two columns (0-60,
    # 60-210) whose second holds two of them, and a grid of three (0-60, 60-120, 120-210)
    lines = [
        ln
        for r in range(4)
        for ln in cell_lines([f"a{r}", f"{r}1", f"{r}2"], r * 30 + 7, [10, 70, 140])
    ]

    def cells(edges: Sequence[float]) -> list[TableCell]:
        return [
            TableCell(row=r + 1, column=c + 1, text="x", box=box(left, r * 30, right, (r + 1) * 30))
            for r in range(4)
            for c, (left, right) in enumerate(itertools.pairwise(edges))
        ]

    # THEN the two-column grid is misaligned with its text, the three-column one is not
    two = table_doubts(page([("table", lines, cells([0, 60, 210]))]))
    three = table_doubts(page([("table", lines, cells([0, 60, 120, 210]))]))
    assert ReviewReason.TABLE_GRID_MISALIGNED in two
    assert ReviewReason.TABLE_GRID_MISALIGNED not in three
    assert three == set()


def test_a_boundary_most_lines_run_across_is_misaligned() -> None:
    # GIVEN a three-column grid whose rows' text each run across its first boundary
    lines = [line(f"row{r} value", 20, r * 30 + 7, width=60) for r in range(4)]
    cells = grid(4, 3)
    assert ReviewReason.TABLE_GRID_MISALIGNED in table_doubts(page([("table", lines, cells)]))


def test_aligned_columns_of_numbers_in_a_text_block_are_a_table_missed() -> None:
    # GIVEN a text block of four rows of a label and three amounts, and a paragraph
    rows = [line(f"item{r} {r}10 {r}20 {r}30", 0, r * 24, width=50) for r in range(4)]
    prose = [
        Line(text=text, box=box(0, r * 24, 390, r * 24 + 16), confidence=0.99)
        for r, text in enumerate(
            ["The order was shipped", "on Monday by road", "and arrives on Friday", "at the depot."]
        )
    ]

    # THEN the first block reads as a table no table block holds, the paragraph does not
    assert ReviewReason.TABLE_MISSED in table_doubts(page([("text", rows, [])]))
    assert table_doubts(page([("text", prose, [])])) == set()


def test_a_table_of_numbers_between_paragraphs_is_a_table_missed() -> None:
    # GIVEN a text block of a paragraph, four rows of a label and three amounts, and a paragraph
    prose = [Line(text="The order was shipped", box=box(0, 0, 390, 16), confidence=0.99)]
    rows = [line(f"item{r} {r}10 {r}20 {r}30", 0, 24 + r * 24, width=50) for r in range(4)]
    after = [Line(text="and arrives on Friday", box=box(0, 120, 390, 136), confidence=0.99)]

    # THEN it holds a table no table block holds, though the block as a whole has no gutters
    assert ReviewReason.TABLE_MISSED in table_doubts(page([("text", prose + rows + after, [])]))


def test_a_figure_whose_text_stands_in_columns_is_a_table_missed() -> None:
    # GIVEN a figure region holding four rows of three words in columns, no number among them,
    # and a figure holding a plot's axis labels
    rows = [line(f"name{r} kind{r} note{r}", 0, n * 24, width=50) for n, r in enumerate("abcd")]
    axis = [line("0 10 20 30", 0, 200, width=20), line("time", 100, 230, width=40)]

    # THEN the first is a table the layout took for a picture, and only in a figure: a text
    # block of words in columns is prose set in columns as often as a table
    assert ReviewReason.TABLE_MISSED in table_doubts(page([("figure", rows, [])]))
    assert table_doubts(page([("figure", axis, [])])) == set()
    assert table_doubts(page([("text", rows, [])])) == set()


def test_rows_of_a_label_and_a_lined_up_amount_are_a_table_missed() -> None:
    # GIVEN four rows of a label and an amount right-aligned at x 300 (an invoice's totals),
    # the same with words where the amounts stand, and three rows of amounts only
    labels = ["Subtotal", "Shipping", "Tax", "Total"]
    amounts = ["1,204.50", "12.00", "96.36", "1,312.86"]

    def rows(values: Sequence[str]) -> list[Line]:
        return [
            ln
            for r, (label, value) in enumerate(zip(labels, values, strict=False))
            for ln in (line(label, 0, r * 24, width=60), line(value, 300 - 60, r * 24, width=60))
        ]

    # THEN only the four rows of amounts are a table no table block holds
    assert ReviewReason.TABLE_MISSED in table_doubts(page([("text", rows(amounts), [])]))
    assert table_doubts(page([("text", rows(["paid", "by", "card", "today"]), [])])) == set()
    assert table_doubts(page([("text", rows(amounts[:3]), [])])) == set()


def test_cells_that_each_hold_several_rows_of_text_merge_rows() -> None:
    # GIVEN a 2 x 2 grid whose cells hold three lines each (12 rows of text in 2 rows), and the
    # same grid with a wrapped cell of two lines beside cells of one
    cells = grid(2, 2)
    stacked = [line(f"v{n}", 10 + 100 * (n % 2), 3 + 9 * (n // 2), width=30) for n in range(12)]
    wrapped = [line(f"w{n}", 10 + 100 * (n % 2), 3 + 30 * (n // 2), width=30) for n in range(4)]
    wrapped.append(line("more", 10, 15, width=30))

    # THEN only the first has its rows merged
    assert ReviewReason.TABLE_ROWS_MERGED in table_doubts(page([("table", stacked, cells)]))
    assert ReviewReason.TABLE_ROWS_MERGED not in table_doubts(page([("table", wrapped, cells)]))


SHOWN = [
    ["Code", "Amount", "Due"],
    ["A17", "4,250.00", "12 May"],
    ["B23", "1,980.50", "30 Jun"],
    ["C41", "7,310.25", "15 Aug"],
]
WRONG = [
    ["Item", "Credit", "Ref"],
    ["Q98", "9,634.11", "47 Oct"],
    ["Z06", "6,405.87", "88 Nov"],
    ["X72", "3,882.64", "29 Feb"],
]


@pytest.mark.ocr
@pytest.mark.parametrize(("layer", "doubtful"), [(WRONG, True), (SHOWN, False)])
def test_a_born_digital_table_whose_pixels_say_otherwise_than_its_layer_is_doubtful(
    registry: EngineRegistry, layer: list[list[str]], doubtful: bool
) -> None:
    # GIVEN a PDF page whose table shows one thing while its text layer says another (or the
    # same), the layer drawn over the picture so that it covers the page's ink
    pdf = misread_table_page(SHOWN, layer, widths=(80, 120, 100))
    options = JobOptions()
    engine = registry.get(OcrModel.PP_STRUCTUREV3, "en", options)

    # WHEN PP-StructureV3 reads it from its PDF
    (read,) = ocr_document(pdf, engine=engine, options=options, page_layer=page_layer).pages

    # THEN the page is read from its layer, and its table is doubtful only where the pixels
    # disagree with it, which a few of its cells read again show
    assert read.text_source == "text_layer"
    assert read.quality is not None
    assert (ReviewReason.TABLE_LAYER_MISMATCH in read.quality.reasons) is doubtful
    assert (read.quality.verdict == "review") is doubtful


def test_a_wrapped_cell_parted_into_rows_splits_rows() -> None:
    # GIVEN a label wrapped over three lines, its value beside the middle one, read as three
    # rows; and a section row over rows of a label and a value, as a statement has them
    def table(texts: Sequence[tuple[str, str]]) -> list[TableCell]:
        cells = grid(len(texts), 2)
        for cell in cells:
            cell.text = texts[cell.row - 1][cell.column - 1]
        return cells

    wrapped = table([("Topic", "Enquiries"), ("Other trade,", ""), ("", "4,330"), ("regional", "")])
    sections = table([("Assets", ""), ("Cash", "120"), ("Current", ""), ("Stock", "45")])

    # THEN only the first parts one cell into rows
    assert ReviewReason.TABLE_ROWS_SPLIT in table_doubts(page([("table", [], wrapped)]))
    assert ReviewReason.TABLE_ROWS_SPLIT not in table_doubts(page([("table", [], sections)]))


@pytest.mark.ocr
def test_a_born_digital_table_whose_rows_disagree_with_its_rules_is_doubtful(
    registry: EngineRegistry,
) -> None:
    # GIVEN a PDF page whose table has a rule under every row, its wrapped labels making the
    # rules' bands read as several rows each
    options = JobOptions()
    engine = registry.get(OcrModel.PP_STRUCTUREV3, "en", options)

    # WHEN PP-StructureV3 reads it from its PDF
    (read,) = ocr_document(
        wrapped_rows_page(), engine=engine, options=options, page_layer=page_layer
    ).pages

    # THEN its table is read from the layer and doubted: rows parted where the rules do not
    assert read.text_source == "text_layer"
    assert any(block.type == "table" for block in read.blocks)
    assert read.quality is not None
    assert ReviewReason.TABLE_ROWS_SPLIT in read.quality.reasons
    assert read.quality.verdict == "review"
