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
    rows: int = 1  # rows it spans down


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
    pdf = _new_page()
    pdf.set_font(FONT, size=FONT_SIZE_PT)
    pdf.set_y(MARGIN_PT)
    if caption is not None:
        pdf.set_x(MARGIN_PT)
        pdf.cell(text=caption)
        pdf.ln(FONT_SIZE_PT * 2)
    top = pdf.get_y()
    layout = {"grid": "ALL", "rows": "HORIZONTAL_LINES", "booktabs": "NONE", "none": "NONE"}
    _set_table(pdf, rows, widths, borders=layout[rules])
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
    """The cells row by row, None in the slots a span covers (to its right and below it)."""
    covered: set[tuple[int, int]] = set()
    grid: list[list[str | None]] = []
    for r, values in enumerate(rows):
        row: list[str | None] = []
        for value in values:
            while (r, len(row)) in covered:
                row.append(None)
            cell = value if isinstance(value, Cell) else Cell(value)
            column = len(row)
            row.append(" ".join(cell.text.split()))
            row += [None] * (cell.span - 1)
            covered |= {
                (r + down, column + across)
                for down in range(1, cell.rows)
                for across in range(cell.span)
            }
        while (r, len(row)) in covered:
            row.append(None)
        grid.append(row)
    return grid


@dataclass(frozen=True)
class Placed:
    """A text set by hand: its left edge (its right edge where `right`) and baseline, points."""

    text: str
    x: float
    y: float
    right: bool = False


def placed_page(
    texts: Sequence[Placed], rules: Sequence[tuple[float, float, float, float]] = ()
) -> bytes:
    """A one-page PDF with each text where it is placed and each rule (x0, y0, x1, y1 in
    points) drawn: a table set as a typesetter sets one, figures aligned on their right."""
    pdf = _new_page()
    pdf.set_font(FONT, size=FONT_SIZE_PT)
    for placed in texts:
        x = placed.x - pdf.get_string_width(placed.text) if placed.right else placed.x
        pdf.text(x, placed.y, placed.text)
    for x0, y0, x1, y1 in rules:
        pdf.line(x0, y0, x1, y1)
    return bytes(pdf.output())


# A table ruled under every row, four of its seven rows wrapped onto a second line in both
# their label and their description (as a questionnaire's glossary sets them).
WRAPPED_BANDS: Final[list[list[tuple[str | None, str | None, str | None]]]] = [
    [("Type", "Description", "Code")],
    [("Visual analog", "A line of fixed length", "V1"), ("scale", "with words at its ends", None)],
    [("Likert scale", "An ordered set of answers", "L2")],
    [("Rating", "A set of numbered", "R3"), ("scale", "categories", None)],
    [("Checklist", "A list of symptoms", "C4")],
    [("Pictorial scale", "A set of pictures", "P5")],
    [("Diary", "Events recorded as", "D6"), ("entries", "they occur", None)],
]


def wrapped_rows_page() -> bytes:
    """A page of WRAPPED_BANDS, a rule under every row."""
    texts, rules, y = [], [(55.0, 90.0, 380.0, 90.0)], 90.0
    for band in WRAPPED_BANDS:
        for line in band:
            y += 12
            texts += [Placed(t, x, y) for t, x in zip(line, (60, 160, 330), strict=True) if t]
        y += 6
        rules.append((55.0, y, 380.0, y))
    return placed_page(texts, rules)


def misread_table_page(
    shown: Sequence[Sequence[str]], layer: Sequence[Sequence[str]], *, widths: Sequence[float]
) -> bytes:
    """A page whose table shows `shown` as pixels while its text layer, drawn in white over the
    same places, says `layer`: a PDF whose layer maps its glyphs wrong. The two must have the
    same shape, each text as long as the one it stands over."""
    import io

    import pypdfium2  # type: ignore[import-untyped]

    picture = pypdfium2.PdfDocument(table_page(shown, rules="grid", widths=widths).pdf)
    try:
        image = picture[0].render(scale=200 / 72).to_pil()
    finally:
        picture.close()
    pdf = _new_page()
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    pdf.image(buffer, x=0, y=0, w=PAGE_SIZE_PT[0], h=PAGE_SIZE_PT[1])
    pdf.set_font(FONT, size=FONT_SIZE_PT)
    pdf.set_text_color(255, 255, 255)
    pdf.set_y(MARGIN_PT)
    _set_table(pdf, layer, widths, borders="NONE")
    return bytes(pdf.output())


def _new_page() -> FPDF:
    """An fpdf2 document of one page, in points, with the bundled font."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=PAGE_SIZE_PT)
    pdf.set_auto_page_break(auto=False)
    pdf.set_margins(MARGIN_PT, MARGIN_PT, MARGIN_PT)
    pdf.add_font(FONT, fname=str(_font_file()))
    pdf.add_page()
    return pdf


def _set_table(
    pdf: FPDF, rows: Sequence[Sequence[str | Cell]], widths: Sequence[float], *, borders: str
) -> None:
    """`rows` set as a table at the page's cursor, with fpdf2's `borders` layout."""
    with pdf.table(
        col_widths=tuple(widths),
        width=sum(widths),
        align="LEFT",
        borders_layout=borders,
        first_row_as_headings=False,
        padding=CELL_PAD_PT,
        line_height=FONT_SIZE_PT * 1.25,
    ) as table:
        for values in rows:
            row = table.row()
            for value in values:
                cell = value if isinstance(value, Cell) else Cell(value)
                row.cell(cell.text, colspan=cell.span, rowspan=cell.rows)
