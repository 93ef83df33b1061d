"""Born-digital PDF pages holding one table of known cells (fpdf2, a dev-only dependency), for
the tests of tables read from the text layer: fully ruled, ruled between rows, booktabs or
unruled, with cells of several lines and cells that span columns.

Each cell is written as fpdf2 writes a table cell (its text wrapped to the column's width), so
the grid a reader sees is the one given, and `table_page` returns where it lies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from devkit.synthetic_pdf import FONT, PAGE_SIZE_PT, _font_file

if TYPE_CHECKING:
    from fpdf import FPDF

Rules = Literal["grid", "rows", "booktabs", "none"]

MARGIN_PT: Final = 56.0
FONT_SIZE_PT: Final = 10.0
CELL_PAD_PT: Final = 3.0


@dataclass(frozen=True)
class Cell:
    text: str
    span: int = 1  # columns


@dataclass(frozen=True)
class TablePage:
    pdf: bytes
    box_pt: tuple[float, float, float, float]  # the table: left, top, right, bottom in points
    grid: list[list[str | None]]  # the cells row by row; None in the slots a span covers


def table_page(
    rows: Sequence[Sequence[str | Cell]],
    *,
    rules: Rules,
    widths: Sequence[float],
    caption: str | None = None,
) -> TablePage:
    """A one-page PDF with `rows` set as a table of columns `widths` (points) and `rules`, and a
    line of running text above it where `caption` is given."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=PAGE_SIZE_PT)
    pdf.set_auto_page_break(auto=False)
    pdf.set_margins(MARGIN_PT, MARGIN_PT, MARGIN_PT)
    pdf.add_font(FONT, fname=str(_font_file()))
    pdf.add_page()
    pdf.set_font(FONT, size=FONT_SIZE_PT)
    pdf.set_y(MARGIN_PT)
    if caption is not None:
        pdf.set_x(MARGIN_PT)
        pdf.cell(text=caption)
        pdf.ln(FONT_SIZE_PT * 2)
    top = pdf.get_y()
    layout = {"grid": "ALL", "rows": "HORIZONTAL_LINES", "booktabs": "NONE", "none": "NONE"}
    with pdf.table(
        col_widths=tuple(widths),
        width=sum(widths),
        align="LEFT",
        borders_layout=layout[rules],
        first_row_as_headings=False,
        padding=CELL_PAD_PT,
        line_height=FONT_SIZE_PT * 1.25,
    ) as table:
        for values in rows:
            row = table.row()
            for value in values:
                cell = value if isinstance(value, Cell) else Cell(value)
                row.cell(cell.text, colspan=cell.span)
    bottom = pdf.get_y()
    right = MARGIN_PT + sum(widths)
    if rules == "booktabs":  # above the header, under it, below the body
        header_bottom = top + _row_height(pdf, rows[0], widths)
        for y in (top, header_bottom, bottom):
            pdf.line(MARGIN_PT, y, right, y)
    buffer = pdf.output()
    return TablePage(bytes(buffer), (MARGIN_PT, top, right, bottom), _grid(rows))


def _row_height(pdf: FPDF, row: Sequence[str | Cell], widths: Sequence[float]) -> float:
    """The height fpdf2 gives a row: its tallest cell's wrapped lines, padded."""
    lines = 1
    column = 0
    for value in row:
        cell = value if isinstance(value, Cell) else Cell(value)
        width = sum(widths[column : column + cell.span]) - 2 * CELL_PAD_PT
        wrapped = pdf.multi_cell(w=width, text=cell.text, dry_run=True, output="LINES")
        lines = max(lines, len(wrapped) if isinstance(wrapped, list) else 1)
        column += cell.span
    return lines * FONT_SIZE_PT * 1.25 + 2 * CELL_PAD_PT


def _grid(rows: Sequence[Sequence[str | Cell]]) -> list[list[str | None]]:
    grid: list[list[str | None]] = []
    for values in rows:
        row: list[str | None] = []
        for value in values:
            cell = value if isinstance(value, Cell) else Cell(value)
            row.append(" ".join(cell.text.split()))
            row += [None] * (cell.span - 1)
        grid.append(row)
    return grid
