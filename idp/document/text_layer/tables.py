"""A born-digital table's grid from what its PDF holds exactly: its words and ruling lines.

A fully ruled table is read as its grid (text_layer.table_grid). Otherwise columns come from
the vertical rulings where the table has them, else from the gutters of its
words: the strips of the table no line of text crosses (a few spanning header cells may). Rows
come from the horizontal rulings where they part most lines of text (each row may then hold a
multi-line cell), else from the lines of text, a line that only continues cells of the row above
(nothing in the first column, nothing where that row is empty) joining it. A run of words that
crosses a column boundary with no ruling there is one cell spanning those columns; in a fully
ruled table, a cell with no ruling under it spans down into the next row. Each cell holds the
words whose centres lie in it, in reading order. How each value was set:
docs/thresholds.md#text-layer-tables.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from idp.contract.results import TableCell
from idp.document.text_layer.rulings import Ruling
from idp.document.text_layer.table_columns import GUTTER_SPACES, table_columns, without_prose
from idp.document.text_layer.table_grid import lattice, without_hollow_lines
from idp.document.text_layer.table_lines import (
    SNAP_HEIGHTS,
    Box,
    TextLine,
    Word,
    bounds_of,
    centre_of,
    column_of,
    crossing_rulings,
    holds,
    text_lines,
    word_space,
)
from idp.document.text_layer.table_rows import parted_unlike_rulings, table_rows

__all__ = ["Box", "LayerTable", "Word", "read_table", "text_lines"]

# docs/thresholds.md#text-layer-tables
SPAN_SPACES: Final = 1.5  # words this many word spaces apart across a boundary: one cell


@dataclass(frozen=True)
class LayerTable:
    """A table read from the text layer: its cells on a grid (1-based, with their spans), how
    its columns and rows were found, and the words that lie across two of its cells."""

    cells: list[TableCell]
    columns: Literal["rulings", "gutters"]
    rows: Literal["rulings", "lines"]
    split_words: int  # words that cross a cell boundary (a grid that cuts through its text)
    words: tuple[Word, ...] = ()  # the words it holds: the region's, less any caption or code
    # Rows read from its lines where its rulings say otherwise (table_rows.parted_unlike_rulings)
    rows_unlike_rulings: bool = False


def read_table(region: Box, words: Sequence[Word], rulings: Sequence[Ruling]) -> LayerTable | None:
    """The table in `region` (module docstring); None where the region holds no word. Lines of
    running text at its top or bottom (a caption, the code that printed it), which run across
    its columns, are no part of it: they are left out (LayerTable.words says what it holds)."""
    inside = [word for word in words if holds(region, centre_of(word.box))]
    if not inside:
        return None
    lines = text_lines(inside)
    height = statistics.median(line.height for line in lines)
    extent = _extent(inside, region)
    grid = lattice(inside, rulings, extent, height)
    if grid is not None:
        cells, held = grid
        split = sum(_outside_cell(word.box, cells) for word in held)
        return LayerTable(
            cells=cells, columns="rulings", rows="rulings", split_words=split, words=tuple(held)
        )
    columns, column_kind = table_columns(lines, inside, rulings, extent, height)
    gap = GUTTER_SPACES * word_space(lines, height)  # words closer than this: one cell's
    kept = without_prose(lines, columns, gap)
    if len(kept) < len(lines):
        lines = kept
        inside = [word for line in lines for word in line.words]
        extent = _extent(inside, bounds_of(inside))
        columns, column_kind = table_columns(lines, inside, rulings, extent, height)
    horizontals = crossing_rulings(rulings, extent, horizontal=True, snap=SNAP_HEIGHTS * height)
    rows, row_kind = table_rows(horizontals, lines, columns, extent, gap)
    space = word_space(lines, height)
    cells = without_hollow_lines(
        _cells(inside, columns, rows, rulings if column_kind == "rulings" else (), space)
    )
    split = sum(_crosses(word.box, columns, rows) for word in inside)
    return LayerTable(
        cells=cells,
        columns=column_kind,
        rows=row_kind,
        split_words=split,
        words=tuple(inside),
        rows_unlike_rulings=row_kind == "lines"
        and parted_unlike_rulings(horizontals, lines, rows, columns),
    )


def _extent(words: Sequence[Word], region: Box) -> Box:
    """The words' bounds, grown to the region: the table's frame lies on its edge."""
    left = min(word.box[0] for word in words)
    top = min(word.box[1] for word in words)
    right = max(word.box[2] for word in words)
    bottom = max(word.box[3] for word in words)
    return (
        min(left, region[0]),
        min(top, region[1]),
        max(right, region[2]),
        max(bottom, region[3]),
    )


def _cells(
    words: Sequence[Word],
    columns: list[float],
    rows: list[float],
    rulings: Sequence[Ruling],
    space: float,
) -> list[TableCell]:
    """The grid's cells with their words; words across a column boundary that no ruling marks
    (a word over it, or words a word space apart on each side of it) make one cell of the
    slots they cover."""
    grid_rows, grid_columns = len(rows) - 1, len(columns) - 1
    texts: dict[tuple[int, int], list[Word]] = {}
    for word in words:
        x, y = centre_of(word.box)
        texts.setdefault((column_of(y, rows), column_of(x, columns)), []).append(word)
    spans: dict[tuple[int, int], int] = {}
    for row in range(grid_rows):
        middle = (rows[row] + rows[row + 1]) / 2
        for first, last in _unruled_stretches(rulings, columns, middle):
            # A stretch holds one cell where its text is one: words in one of its slots only.
            if sum(bool(texts.get((row, c))) for c in range(first, last + 1)) <= 1:
                spans[(row, first)] = max(spans.get((row, first), 1), last - first + 1)
        in_row = [w for w in words if rows[row] <= centre_of(w.box)[1] < rows[row + 1]]
        for line in text_lines(in_row):
            for first, last, run in _spanning(line, columns, space):
                if not _ruled_between(rulings, columns, first, last, run):
                    spans[(row, first)] = max(spans.get((row, first), 1), last - first + 1)
    cells: list[TableCell] = []
    covered: set[tuple[int, int]] = set()
    for row in range(grid_rows):
        for column in range(grid_columns):
            if (row, column) in covered:
                continue
            span = spans.get((row, column), 1)
            members = [
                word for c in range(column, column + span) for word in texts.get((row, c), [])
            ]
            covered.update((row, c) for c in range(column, column + span))
            left, right = columns[column], columns[column + span]
            top, bottom = rows[row], rows[row + 1]
            cells.append(
                TableCell(
                    row=row + 1,
                    column=column + 1,
                    column_span=span,
                    text=cell_text(members),
                    box=((left, top), (right, top), (right, bottom), (left, bottom)),
                )
            )
    return cells


def _spanning(line: TextLine, columns: list[float], space: float) -> list[tuple[int, int, Box]]:
    """The line's cells that cover more than one column: (first, last column, their box). A
    word spans the boundaries inside it; two neighbouring words at most SPAN_SPACES word spaces
    apart stay one cell across a boundary between them."""
    found: list[tuple[int, int, Box]] = []
    group: list[Word] = []
    for word in [*line.words, None]:
        if group and word is not None:
            gap = word.box[0] - group[-1].box[2]
            if gap <= SPAN_SPACES * space:
                group.append(word)
                continue
        if group:
            first = column_of(group[0].box[0] + 1, columns)
            last = column_of(group[-1].box[2] - 1, columns)
            if last > first:
                box = (group[0].box[0], group[0].box[1], group[-1].box[2], group[-1].box[3])
                found.append((first, last, box))
        group = [word] if word is not None else []
    return found


def _unruled_stretches(
    rulings: Sequence[Ruling], columns: list[float], y: float
) -> list[tuple[int, int]]:
    """In a ruled grid, the stretches of columns (first, last) that a row at `y` holds as one
    cell: where a boundary ruled elsewhere in the table has no ruling at this row."""
    ruled = [any(not r.horizontal and abs(r.at - x) <= 2 for r in rulings) for x in columns[1:-1]]
    stretches: list[tuple[int, int]] = []
    first = 0
    for index, x in enumerate(columns[1:-1]):
        here = any(
            not r.horizontal and abs(r.at - x) <= 2 and r.start <= y <= r.end for r in rulings
        )
        if ruled[index] and not here:
            continue  # the slots on each side of this boundary are one cell
        if index > first:
            stretches.append((first, index))
        first = index + 1
    if len(columns) - 2 > first:
        stretches.append((first, len(columns) - 2))
    return stretches


def _ruled_between(
    rulings: Sequence[Ruling], columns: list[float], first: int, last: int, run: Box
) -> bool:
    """Whether a vertical ruling stands between the run's first and last columns at its height."""
    for boundary in columns[first + 1 : last + 1]:
        for ruling in rulings:
            if (
                not ruling.horizontal
                and abs(ruling.at - boundary) <= 2
                and ruling.start <= (run[1] + run[3]) / 2 <= ruling.end
            ):
                return True
    return False


def cell_text(words: Sequence[Word]) -> str:
    """A cell's words in reading order: line by line, each left to right."""
    return " ".join(word.text for line in text_lines(words) for word in line.words)


def _outside_cell(box: Box, cells: Sequence[TableCell]) -> bool:
    """Whether a word reaches out of the cell that holds its centre."""
    x, y = centre_of(box)
    for cell in cells:
        if cell.box is None:
            continue
        (left, top), _, (right, bottom), _ = cell.box
        if left <= x <= right and top <= y <= bottom:
            return (
                box[0] < left - 1 or box[2] > right + 1 or box[1] < top - 1 or box[3] > bottom + 1
            )
    return False


def _crosses(box: Box, columns: list[float], rows: list[float]) -> bool:
    inner_columns = columns[1:-1]
    inner_rows = rows[1:-1]
    margin = 0.5
    return any(box[0] + margin < x < box[2] - margin for x in inner_columns) or any(
        box[1] + margin < y < box[3] - margin for y in inner_rows
    )
