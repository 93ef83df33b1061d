"""A table as cells: the HTML a table model writes, read into cells on a grid (with their row and
column spans), and a grid of cells written as a Markdown table."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Final

from idp.contract.results import Quad, TableCell

_MAX_SPAN: Final = 1000  # a span beyond this is a broken table, not a layout


@dataclass
class _ParsedCell:
    text: list[str] = field(default_factory=list)
    row_span: int = 1
    column_span: int = 1


class _TableParser(HTMLParser):
    """The rows of the first table in an HTML fragment: each a list of cells."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[_ParsedCell]] = []
        self._cell: _ParsedCell | None = None
        self._depth = 0  # nested tables are read as text of their cell

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._depth += 1
        elif self._depth > 1:
            return
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            values = dict(attrs)
            self._cell = _ParsedCell(
                row_span=_span(values.get("rowspan")), column_span=_span(values.get("colspan"))
            )
            if not self.rows:
                self.rows.append([])
            self.rows[-1].append(self._cell)
        elif tag == "br" and self._cell is not None:
            self._cell.text.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._depth -= 1
        elif tag in ("td", "th") and self._depth == 1:
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.text.append(data)


def _span(value: str | None) -> int:
    try:
        return min(max(int(value or 1), 1), _MAX_SPAN)
    except ValueError:
        return 1


def cells_of_html(table_html: str, boxes: Sequence[Quad | None] = ()) -> list[TableCell]:
    """The cells of an HTML table, row by row, each placed on the grid (1-based) past the cells
    that earlier rows span into it. `boxes`, where given, are the cells' boxes in the order the
    HTML lists them (a table model's cell boxes)."""
    parser = _TableParser()
    parser.feed(table_html)
    parser.close()
    taken: set[tuple[int, int]] = set()
    cells: list[TableCell] = []
    order = 0
    for row_index, row in enumerate(parser.rows, start=1):
        column = 1
        for parsed in row:
            while (row_index, column) in taken:
                column += 1
            for r in range(row_index, row_index + parsed.row_span):
                for c in range(column, column + parsed.column_span):
                    taken.add((r, c))
            text = " ".join(html.unescape("".join(parsed.text)).split())
            box = boxes[order] if order < len(boxes) else None
            cells.append(
                TableCell(
                    row=row_index,
                    column=column,
                    row_span=parsed.row_span,
                    column_span=parsed.column_span,
                    text=text,
                    box=box,
                )
            )
            order += 1
            column += parsed.column_span
    return cells


def grid_size(cells: Sequence[TableCell]) -> tuple[int, int]:
    """(rows, columns) of the grid the cells cover."""
    rows = max((cell.row + cell.row_span - 1 for cell in cells), default=0)
    columns = max((cell.column + cell.column_span - 1 for cell in cells), default=0)
    return rows, columns


def markdown_table(cells: Sequence[TableCell]) -> str:
    """A Markdown (GFM) table of the cells: the first row as its header, a spanning cell's text
    in its first grid place and the rest of its places empty."""
    rows, columns = grid_size(cells)
    if not rows or not columns:
        return ""
    grid = [["" for _ in range(columns)] for _ in range(rows)]
    for cell in cells:
        grid[cell.row - 1][cell.column - 1] = cell.text.replace("|", r"\|")
    lines = ["| " + " | ".join(grid[0]) + " |", "|" + "---|" * columns]
    lines += ["| " + " | ".join(row) + " |" for row in grid[1:]]
    return "\n".join(lines)


def html_table(cells: Sequence[TableCell]) -> str:
    """The cells as an HTML table (PP-StructureV3's form: rows of td, spans as attributes), the
    inverse of `cells_of_html`."""
    rows: dict[int, list[TableCell]] = {}
    for cell in sorted(cells, key=lambda c: (c.row, c.column)):
        rows.setdefault(cell.row, []).append(cell)
    parts = ["<table>"]
    for number in range(1, grid_size(cells)[0] + 1):
        parts.append("<tr>")
        for cell in rows.get(number, []):
            spans = "".join(
                f' {name}="{value}"'
                for name, value in (("rowspan", cell.row_span), ("colspan", cell.column_span))
                if value > 1
            )
            parts.append(f"<td{spans}>{html.escape(cell.text)}</td>")
        parts.append("</tr>")
    parts.append("</table>")
    return "".join(parts)
