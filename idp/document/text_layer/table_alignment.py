"""Where a born-digital page's words stand in columns as a table's do, whether or not a layout
model saw a table there, and no ruling shows one.

A table with no rules still parts its words into columns: its rows are lines of several runs
of words set apart by gutters, which run down every line of it (a section row or a wrapped
cell's second line may hold one run). What makes such a block a table and not two columns of
running text or a form is a column of values: short cells, most of them numbers (amounts,
prices, counts, dates). How the values were set: docs/thresholds.md#text-layer-tables.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from idp.document.text_layer.table_columns import GUTTER_SPACES, gutters
from idp.document.text_layer.table_lines import (
    bounds_of,
    centre_of,
    column_of,
    holds,
    text_lines,
    word_runs,
    word_space,
)

if TYPE_CHECKING:
    from idp.document.text_layer.table_lines import Box, TextLine, Word

# docs/thresholds.md#text-layer-tables
MIN_ROWS: Final = 3  # a table has at least this many lines of several runs
ROW_GAP_HEIGHTS: Final = 1.5  # lines further apart than this (line heights) are two blocks
SEVERAL_RUNS_SHARE: Final = 0.5  # ... and this share of its lines hold several (not a chart's)
VALUE_SHARE: Final = 0.6  # a column of values: this share of its cells hold a digit
VALUE_WORDS: Final = 3  # ... and its cells hold at most this many words (median)


def aligned_tables(words: Sequence[Word], taken: Sequence[Box]) -> list[Box]:
    """The boxes of the blocks of the page's words, outside the `taken` boxes, that stand in
    columns as a table's do (module docstring), top to bottom."""
    free = [w for w in words if not any(holds(box, centre_of(w.box)) for box in taken)]
    lines = text_lines(free)
    if len(lines) < MIN_ROWS:
        return []
    height = statistics.median(line.height for line in lines)
    gap = GUTTER_SPACES * word_space(lines, height)
    found = []
    for block in _blocks(lines, height, gap):
        box = _table_box(block, height, gap)
        if box is not None:
            found.append(box)
    return found


def _blocks(lines: list[TextLine], height: float, gap: float) -> list[list[TextLine]]:
    """Runs of lines of several runs of words, close to each other: a line of one run inside
    a run (a section row, a wrapped cell) stays; at the ends it is left out."""
    blocks: list[list[TextLine]] = []
    current: list[TextLine] = []
    for line in lines:
        near = not current or line.top - current[-1].bottom <= ROW_GAP_HEIGHTS * height
        if not near:
            blocks.append(current)
            current = []
        current.append(line)
    blocks.append(current)
    parts = []
    for block in blocks:
        several = [i for i, line in enumerate(block) if len(word_runs(line, gap)) >= 2]
        if several:
            parts.append(block[several[0] : several[-1] + 1])
    return parts


def _table_box(block: list[TextLine], height: float, gap: float) -> Box | None:
    """The block's box where it stands in columns with a column of values, else None."""
    several = sum(len(word_runs(line, gap)) >= 2 for line in block)
    if several < MIN_ROWS or several < SEVERAL_RUNS_SHARE * len(block):
        return None
    words = [word for line in block for word in line.words]
    box = bounds_of(words)
    strips = gutters(block, box, height)
    if not strips:
        return None
    columns = [box[0], *(middle for _, _, middle in strips), box[2] + 1]
    cells: list[list[list[str]]] = [[] for _ in range(len(columns) - 1)]
    for line in block:
        by_column: dict[int, list[str]] = {}
        for word in line.words:
            by_column.setdefault(column_of(centre_of(word.box)[0], columns), []).append(word.text)
        for index, texts in by_column.items():
            cells[index].append(texts)
    if not any(_values(column) for column in cells[1:]):
        return None
    return box


def _values(cells: list[list[str]]) -> bool:
    """Whether a column's cells are values: short, VALUE_SHARE of them holding a digit."""
    if len(cells) < MIN_ROWS:
        return False
    digits = sum(any(ch.isdigit() for text in cell for ch in text) for cell in cells)
    return (
        digits >= VALUE_SHARE * len(cells)
        and statistics.median(len(cell) for cell in cells) <= VALUE_WORDS
    )
