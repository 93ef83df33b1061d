"""What makes a page's tables doubtful, for its verdict (steps.quality): a grid that cuts through
its text, a grid its text's alignment contradicts, a row whose cells do not fill the grid, a
table of one row or column, cells that each hold several rows of text, a wrapped cell parted
into rows, and aligned columns of numbers (or of any text, in a figure), or labelled values,
that no table holds. How each was set: docs/thresholds.md#doubtful-tables.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from operator import itemgetter
from typing import Final

from idp.contract.quads import area, bounds, overlap
from idp.contract.results import Line, ReviewReason, TableCell
from idp.document.ocr.engine import PageContent
from idp.document.ocr.steps.aligned_tables import line_words
from idp.document.ocr.steps.tables import grid_size
from idp.document.text_layer.table_columns import GUTTER_SPACES, gutters
from idp.document.text_layer.table_lines import (
    Box,
    TextLine,
    bounds_of,
    text_lines,
    word_runs,
    word_space,
)

# docs/thresholds.md#doubtful-tables
SECOND_CELL_SHARE: Final = 0.25  # a line this much in a second cell runs across its boundary
SPLIT_LINES: Final = 0.05  # so many of a table's lines across a boundary make it doubtful
CROSSED_ROWS: Final = 0.3  # a boundary this share of the table's lines run across is no column's
MIN_COLUMNS: Final = 3  # aligned text of this many columns over MIN_ROWS rows is a table's
MIN_ROWS: Final = 3
NUMERIC_SHARE: Final = 0.4  # ... where this share of its cells are numbers (any, in a figure)
VALUE_ROWS: Final = 4  # consecutive rows of a label and a lined-up value are a two-column table
MERGED_LINES: Final = 3.0  # a table's cells holding this many lines each on average merge rows
_TEXT_BLOCKS: Final = frozenset({"text", "list"})


def table_doubts(content: PageContent) -> set[ReviewReason]:
    """The reasons the page's tables (or the tables it seems to lack) are doubtful."""
    doubts: set[ReviewReason] = set()
    for block in content.blocks:
        lines = [content.lines[index] for index in block.lines if index < len(content.lines)]
        if block.type == "table" and block.cells:
            if text_split(block.cells, lines):
                doubts.add(ReviewReason.TABLE_TEXT_SPLIT)
            if cells_missing(block.cells):
                doubts.add(ReviewReason.TABLE_CELLS_MISSING)
            if 1 in grid_size(block.cells):
                doubts.add(ReviewReason.TABLE_FRAGMENT)
            if rows_merged(block.cells, lines):
                doubts.add(ReviewReason.TABLE_ROWS_MERGED)
            if rows_split(block.cells):
                doubts.add(ReviewReason.TABLE_ROWS_SPLIT)
            if grid_misaligned(block.cells, lines):
                doubts.add(ReviewReason.TABLE_GRID_MISALIGNED)
        elif block.type in _TEXT_BLOCKS and (table_shaped(lines) or labelled_values(lines)):
            doubts.add(ReviewReason.TABLE_MISSED)
        elif block.type == "figure" and (
            table_shaped(lines, numeric_share=0.0) or labelled_values(lines)
        ):
            doubts.add(ReviewReason.TABLE_MISSED)  # a table the layout took for a picture
    return doubts


def text_split(cells: Sequence[TableCell], lines: Sequence[Line]) -> bool:
    """Whether SPLIT_LINES of the table's lines lie partly in a second cell (SECOND_CELL_SHARE of
    their box or more): the grid cuts through the text it reads."""
    boxes = [bounds(cell.box) for cell in cells if cell.box is not None]
    if not boxes or not lines:
        return False
    split = 0
    for line in lines:
        box = bounds(line.box)
        size = area(box)
        shares = sorted((overlap(box, cell) / size for cell in boxes), reverse=True) if size else []
        split += len(shares) > 1 and shares[1] >= SECOND_CELL_SHARE
    return split >= max(1.0, SPLIT_LINES * len(lines))


def cells_missing(cells: Sequence[TableCell]) -> bool:
    """Whether some slot of the grid is in no cell: a row with fewer cells than the grid."""
    rows, columns = grid_size(cells)
    covered = {
        (r, c)
        for cell in cells
        for r in range(cell.row, cell.row + cell.row_span)
        for c in range(cell.column, cell.column + cell.column_span)
    }
    return len(covered) < rows * columns


def rows_merged(cells: Sequence[TableCell], lines: Sequence[Line]) -> bool:
    """Whether the table's filled cells hold MERGED_LINES of its lines each on average: the
    grid ran several rows of text into each of its rows (a wrapped cell holds two or three)."""
    filled = sum(bool(cell.text.strip()) for cell in cells)
    return filled > 0 and len(lines) >= MERGED_LINES * filled


def rows_split(cells: Sequence[TableCell]) -> bool:
    """Whether a row whose first cell is empty and another filled lies between two rows whose
    first cell alone is filled: a wrapped first cell parted into rows, its value on the middle
    one (a section row or a blank value has text on one side only)."""
    filled: dict[int, set[int]] = {}
    for cell in cells:
        if cell.text.strip():
            filled.setdefault(cell.row, set()).add(cell.column)
    rows, columns = grid_size(cells)
    if columns < 2:
        return False
    only_first = {row for row, held in filled.items() if held == {1}}
    return any(
        row - 1 in only_first and row + 1 in only_first and 1 not in filled[row]
        for row in filled
        if 1 < row < rows
    )


def grid_misaligned(cells: Sequence[TableCell], lines: Sequence[Line]) -> bool:
    """Whether the table's text contradicts its grid: a column boundary that CROSSED_ROWS of its
    lines run across (outside the cells that span it), or gutters the text leaves inside one
    of the grid's columns (a column the grid does not have)."""
    placed = [(cell, bounds(cell.box)) for cell in cells if cell.box is not None]
    if not placed or len(lines) < MIN_ROWS:
        return False
    single = [box for cell, box in placed if cell.column_span == 1]
    edges = sorted({round(box[0]) for box in single} | {round(box[2]) for box in single})
    inner = edges[1:-1]
    spanning = [box for cell, box in placed if cell.column_span > 1]
    for x in inner:
        crossing = sum(
            box[0] + 2 < x < box[2] - 2
            and not any(s[0] <= box[0] and box[2] <= s[2] for s in spanning)
            for box in (bounds(line.box) for line in lines)
        )
        if crossing >= 2 and crossing >= CROSSED_ROWS * len(lines):
            return True
    words = line_words(lines)
    rows = text_lines(words)
    height = sorted(row.height for row in rows)[len(rows) // 2]
    table = (
        min(box[0] for _, box in placed),
        min(box[1] for _, box in placed),
        max(box[2] for _, box in placed),
        max(box[3] for _, box in placed),
    )
    strips = [(start, end) for start, end, _ in gutters(rows, table, height)]
    return any(not any(start - 2 <= x <= end + 2 for x in edges) for start, end in strips)


def table_shaped(lines: Sequence[Line], *, numeric_share: float = NUMERIC_SHARE) -> bool:
    """Whether a block of text holds a table: sought in the whole block and in each stretch of
    its consecutive rows of MIN_COLUMNS runs of words (a table between paragraphs)."""
    found = _rows(lines, MIN_ROWS)
    if found is None:
        return False
    rows, height, gap = found
    wide = [len(word_runs(row, gap)) >= MIN_COLUMNS for row in rows]
    stretches = [
        [row for row, _ in stretch]
        for is_wide, stretch in itertools.groupby(zip(rows, wide, strict=True), key=itemgetter(1))
        if is_wide
    ]
    return any(_columns_of_numbers(part, height, gap, numeric_share) for part in [rows, *stretches])


def labelled_values(lines: Sequence[Line]) -> bool:
    """Whether a block holds VALUE_ROWS consecutive rows of a label and a value (two runs of
    words, the second at least half digits) whose values line up, left or right edges within a
    line's height: a table of two columns, as an invoice's totals or a rate table."""
    found = _rows(lines, VALUE_ROWS)
    if found is None:
        return False
    rows, height, gap = found
    values = [_value_run(row, gap) for row in rows]
    for is_value, stretch in itertools.groupby(values, key=lambda run: run is not None):
        runs = [run for run in stretch if run is not None]
        if is_value and len(runs) >= VALUE_ROWS:
            lefts, rights = [run[0] for run in runs], [run[2] for run in runs]
            if min(statistics.pstdev(lefts), statistics.pstdev(rights)) < height:
                return True
    return False


def _value_run(row: TextLine, gap: float) -> Box | None:
    """The row's second run of words, where it has two and the second is at least half digits."""
    runs = word_runs(row, gap)
    if len(runs) != 2:
        return None
    text = "".join(word.text for word in row.words if word.box[0] >= runs[1][0])
    return runs[1] if text and 2 * sum(ch.isdigit() for ch in text) >= len(text) else None


def _columns_of_numbers(
    rows: Sequence[TextLine], height: float, gap: float, numeric_share: float
) -> bool:
    """Whether the rows stand in MIN_COLUMNS columns their gutters part, MIN_ROWS of them of
    MIN_COLUMNS runs of words, `numeric_share` of those rows' words numbers."""
    if len(rows) < MIN_ROWS:
        return False
    words = [word for row in rows for word in row.words]
    if len(gutters(rows, bounds_of(words), height)) + 1 < MIN_COLUMNS:
        return False
    wide = [row for row in rows if len(word_runs(row, gap)) >= MIN_COLUMNS]
    if len(wide) < MIN_ROWS:
        return False
    texts = [word.text for row in wide for word in row.words]
    numeric = sum(any(ch.isdigit() for ch in text) for text in texts)
    return numeric >= numeric_share * len(texts)


def _rows(lines: Sequence[Line], least: int) -> tuple[list[TextLine], float, float] | None:
    """The lines' words as rows, their median height and a gutter's least width; None for
    fewer than `least` rows."""
    if len(lines) < least:
        return None
    rows = text_lines(line_words(lines))
    if len(rows) < least:
        return None
    height = sorted(row.height for row in rows)[len(rows) // 2]
    return rows, height, GUTTER_SPACES * word_space(rows, height)
