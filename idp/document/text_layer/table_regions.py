"""Where a born-digital page's ruling lines show a table, whether or not a layout model saw one.

Two shapes are taken: a grid (horizontal and vertical rulings that cross each other, at least
two rows by two columns inside their frame), and a stack of horizontal rules of one span (a
booktabs table: above its header, under it, below its body) with columns of words between them.
A frame around a page or a box around a paragraph parts nothing and is no table; nor is a grid
whose cells hold little text (a chart's gridlines, an empty form). How the values
were set: docs/thresholds.md#text-layer-tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from idp.document.text_layer.rulings import Ruling
from idp.document.text_layer.tables import Box, Word, read_table

TOUCH_PX: Final = 3.0  # rulings this close meet
MIN_RULE_SHARE: Final = 0.2  # a booktabs rule spans at least this share of the page's width
SAME_SPAN_PX: Final = 6.0  # rules whose ends lie this close span the same table
MIN_COLUMNS: Final = 3  # a stack of rules holds a table when its words make this many columns
MIN_LINES: Final = 2
FILLED_CELLS: Final = 0.5  # a grid of rulings is a table where text fills this share of it


def ruled_tables(rulings: Sequence[Ruling], words: Sequence[Word], width: float) -> list[Box]:
    """The boxes of the tables the page's rulings draw (module docstring), top to bottom."""
    grids = [box for box in _grids(rulings) if _filled(box, words, rulings)]
    found = [*grids, *_rule_stacks(rulings, words, width)]
    kept: list[Box] = []
    for box in sorted(found, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]), reverse=True):
        if not any(_inside(box, other) for other in kept):
            kept.append(box)
    return sorted(kept, key=lambda b: b[1])


def _meets(a: Ruling, b: Ruling) -> bool:
    if a.horizontal == b.horizontal:
        return (
            abs(a.at - b.at) <= TOUCH_PX
            and a.start <= b.end + TOUCH_PX
            and b.start <= a.end + TOUCH_PX
        )
    h, v = (a, b) if a.horizontal else (b, a)
    return (
        h.start - TOUCH_PX <= v.at <= h.end + TOUCH_PX
        and v.start - TOUCH_PX <= h.at <= v.end + TOUCH_PX
    )


def _grids(rulings: Sequence[Ruling]) -> list[Box]:
    """Connected sets of crossing rulings with two rows and two columns inside their frame."""
    pending = list(rulings)
    boxes: list[Box] = []
    while pending:
        group = [pending.pop()]
        grew = True
        while grew:
            grew = False
            for ruling in list(pending):
                if any(_meets(ruling, member) for member in group):
                    group.append(ruling)
                    pending.remove(ruling)
                    grew = True
        rows = _distinct([r.at for r in group if r.horizontal])
        columns = _distinct([r.at for r in group if not r.horizontal])
        if len(rows) >= 3 and len(columns) >= 3:
            xs = [x for r in group for x in ((r.start, r.end) if r.horizontal else (r.at, r.at))]
            ys = [y for r in group for y in ((r.at, r.at) if r.horizontal else (r.start, r.end))]
            boxes.append((min(xs), min(ys), max(xs), max(ys)))
    return boxes


def _filled(box: Box, words: Sequence[Word], rulings: Sequence[Ruling]) -> bool:
    """Whether text fills at least FILLED_CELLS of the grid's cells: a chart's gridlines hold
    their tick labels outside them, and a form's boxes wait to be filled."""
    table = read_table(box, words, rulings)
    if table is None:
        return False
    return sum(bool(cell.text) for cell in table.cells) >= FILLED_CELLS * len(table.cells)


def _distinct(positions: list[float]) -> list[float]:
    kept: list[float] = []
    for at in sorted(positions):
        if not kept or at - kept[-1] > TOUCH_PX:
            kept.append(at)
    return kept


def _rule_stacks(rulings: Sequence[Ruling], words: Sequence[Word], width: float) -> list[Box]:
    """Stacks of long horizontal rules of one span holding columns of words between them."""
    rules = sorted(
        (r for r in rulings if r.horizontal and r.length >= MIN_RULE_SHARE * width),
        key=lambda r: r.at,
    )
    boxes: list[Box] = []
    used: set[int] = set()
    for index, first in enumerate(rules):
        if index in used:
            continue
        stack = [first] + [
            r
            for r in rules[index + 1 :]
            if abs(r.start - first.start) <= SAME_SPAN_PX and abs(r.end - first.end) <= SAME_SPAN_PX
        ]
        used.update(rules.index(r) for r in stack)
        if len(stack) < 2:
            continue
        box = (first.start, stack[0].at, first.end, stack[-1].at)
        table = read_table(box, words, ())
        if table is None:
            continue
        lines = max(cell.row + cell.row_span - 1 for cell in table.cells)
        columns = max(cell.column + cell.column_span - 1 for cell in table.cells)
        if columns >= MIN_COLUMNS and lines >= MIN_LINES:
            boxes.append(box)
    return boxes


def _inside(box: Box, outer: Box) -> bool:
    return (
        box[0] >= outer[0] - TOUCH_PX
        and box[1] >= outer[1] - TOUCH_PX
        and box[2] <= outer[2] + TOUCH_PX
        and box[3] <= outer[3] + TOUCH_PX
    )
