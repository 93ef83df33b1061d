"""A fully ruled table read as its grid (a lattice): every ruling in its frame, whole or partial,
a boundary; the slots that no ruling parts, one cell (a header over several columns, a label
down several rows). How the values were set: docs/thresholds.md#text-layer-tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from idp.contract.results import TableCell
from idp.document.text_layer.rulings import Ruling
from idp.document.text_layer.table_lines import (
    SNAP_HEIGHTS,
    Box,
    Word,
    centre_of,
    column_of,
    crossing_rulings,
    text_lines,
    word_space,
)
from idp.document.text_layer.table_rows import RULED_ROWS, labels

# docs/thresholds.md#text-layer-tables
MIN_RULING_HEIGHTS: Final = 1.0  # a ruling at least this many line heights long parts slots
DOUBLE_RULE_HEIGHTS: Final = 0.6  # rulings closer than this (line heights) are one (a double rule)
FRAMED: Final = 0.8  # a grid frames its table where this share of the words lie inside it
TOUCH_PX: Final = 2.0  # a ruling this close to a boundary stands on it


def lattice(
    words: Sequence[Word], rulings: Sequence[Ruling], extent: Box, height: float
) -> tuple[list[TableCell], list[Word]] | None:
    """The table's cells read from its grid of rulings, and the words inside the grid; None
    where the rulings make no grid of two rows by two columns framing FRAMED of the words."""
    snap = SNAP_HEIGHTS * height
    least = MIN_RULING_HEIGHTS * height
    # The frame may stand a little outside the words and the region around them.
    extent = (extent[0] - height, extent[1] - height, extent[2] + height, extent[3] + height)
    xs = _merged(
        crossing_rulings(rulings, extent, horizontal=False, snap=snap, least=least), height
    )
    ys = _merged(crossing_rulings(rulings, extent, horizontal=True, snap=snap, least=least), height)
    if len(xs) < 3 or len(ys) < 3:
        return None
    inside = [
        word
        for word in words
        if xs[0] <= centre_of(word.box)[0] <= xs[-1] and ys[0] <= centre_of(word.box)[1] <= ys[-1]
    ]
    if len(inside) < FRAMED * len(words) or not _one_row_a_band(inside, xs, ys, height):
        return None
    groups = _slots(xs, ys, rulings, inside)
    cells = []
    for top, left, bottom, right in groups:
        members = [
            word
            for word in inside
            if top <= column_of(centre_of(word.box)[1], ys) <= bottom
            and left <= column_of(centre_of(word.box)[0], xs) <= right
        ]
        text = " ".join(word.text for line in text_lines(members) for word in line.words)
        box = (xs[left], ys[top], xs[right + 1], ys[bottom + 1])
        cells.append(
            TableCell(
                row=top + 1,
                column=left + 1,
                row_span=bottom - top + 1,
                column_span=right - left + 1,
                text=text,
                box=((box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3])),
            )
        )
    return without_hollow_lines(cells), inside


def _merged(positions: list[float], height: float) -> list[float]:
    """Rulings closer than a double rule's gap as one."""
    kept: list[float] = []
    for at in positions:
        if kept and at - kept[-1] < DOUBLE_RULE_HEIGHTS * height:
            continue
        kept.append(at)
    return kept


def _ruled(rulings: Sequence[Ruling], *, horizontal: bool, at: float, across: float) -> bool:
    """Whether a ruling of the direction stands at `at` where the grid is at `across`."""
    return any(
        r.horizontal == horizontal and abs(r.at - at) <= TOUCH_PX and r.start <= across <= r.end
        for r in rulings
    )


def _one_row_a_band(words: Sequence[Word], xs: list[float], ys: list[float], height: float) -> bool:
    """Whether the grid's rows are the table's: RULED_ROWS of the bands between its horizontal
    rulings hold one label (table_rows.labels), as a grid ruled under every row does."""
    bands = [
        [w for w in words if ys[r] <= centre_of(w.box)[1] < ys[r + 1]] for r in range(len(ys) - 1)
    ]
    gap = 2 * word_space(text_lines(words), height)
    single = sum(labels(text_lines(band), xs, gap) <= 1 for band in bands if band)
    return single >= RULED_ROWS * sum(bool(band) for band in bands)


def _slots(
    xs: list[float],
    ys: list[float],
    rulings: Sequence[Ruling],
    words: Sequence[Word],
) -> list[tuple[int, int, int, int]]:
    """The grid's cells as (top row, left column, bottom row, right column): the slots joined
    where no ruling parts them, unless both hold text and no word crosses between them (a
    shaded row drawn without its rules keeps its cells), each join a rectangle (a join that
    is none stays apart)."""
    rows, columns = len(ys) - 1, len(xs) - 1
    parent = {(r, c): (r, c) for r in range(rows) for c in range(columns)}
    placed = [
        ((column_of(centre_of(word.box)[1], ys), column_of(centre_of(word.box)[0], xs)), word.box)
        for word in words
    ]
    filled = {slot for slot, _ in placed}

    def root(slot: tuple[int, int]) -> tuple[int, int]:
        while parent[slot] != slot:
            slot = parent[slot]
        return slot

    def crossed(slot: tuple[int, int], *, horizontal: bool) -> bool:
        """Whether a word of the slot reaches over its right (or lower) boundary."""
        r, c = slot
        after = (r + 1, c) if horizontal else (r, c + 1)
        edge = ys[r + 1] if horizontal else xs[c + 1]
        return any(
            (at == slot and box[3 if horizontal else 2] > edge)
            or (at == after and box[1 if horizontal else 0] < edge)
            for at, box in placed
        )

    def joins(slot: tuple[int, int], other: tuple[int, int], *, horizontal: bool) -> bool:
        both = slot in filled and other in filled
        return not both or crossed(slot, horizontal=horizontal)

    for r in range(rows):
        middle_y = (ys[r] + ys[r + 1]) / 2
        for c in range(columns):
            middle_x = (xs[c] + xs[c + 1]) / 2
            if (
                c + 1 < columns
                and not _ruled(rulings, horizontal=False, at=xs[c + 1], across=middle_y)
                and joins((r, c), (r, c + 1), horizontal=False)
            ):
                parent[root((r, c + 1))] = root((r, c))
            if (
                r + 1 < rows
                and not _ruled(rulings, horizontal=True, at=ys[r + 1], across=middle_x)
                and joins((r, c), (r + 1, c), horizontal=True)
            ):
                parent[root((r + 1, c))] = root((r, c))
    members: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for slot in parent:
        members.setdefault(root(slot), []).append(slot)
    groups = []
    for slots in members.values():
        top, bottom = min(r for r, _ in slots), max(r for r, _ in slots)
        left, right = min(c for _, c in slots), max(c for _, c in slots)
        if len(slots) == (bottom - top + 1) * (right - left + 1):
            groups.append((top, left, bottom, right))
        else:
            groups += [(r, c, r, c) for r, c in slots]
    return sorted(groups)


def without_hollow_lines(cells: list[TableCell]) -> list[TableCell]:
    """The cells without the grid's empty rows (no text, no cell over several rows: the thin
    band between two rules set apart) and its hollow columns, renumbered, the cells over them
    narrowed. A column is hollow where no cell of its own holds text and either no cell spans
    it (a spacer) or a cell with text does (a slot of that wider cell: the gap between cells
    drawn as boxes set apart, a label's column cut by a header's rule). A blank column under
    a blank span is a form's field, and stays; so does a column where a cell's text would
    have nowhere left to go."""
    rows = {
        row
        for row in {cell.row for cell in cells}
        if all(not c.text for c in cells if c.row == row and c.row_span == 1)
        and all(c.row_span == 1 for c in cells if c.row <= row < c.row + c.row_span)
    }
    spans = [c for c in cells if c.column_span > 1]
    columns = {
        column
        for column in _hollow([(c.column, c.column_span, bool(c.text)) for c in cells])
        if not (over := [c for c in spans if c.column <= column < c.column + c.column_span])
        or any(c.text for c in over)
    }
    if not rows and not columns:
        return cells
    kept = []
    for cell in cells:
        row, row_span = _narrowed(cell.row, cell.row_span, rows)
        column, column_span = _narrowed(cell.column, cell.column_span, columns)
        if row_span and column_span:
            kept.append(
                cell.model_copy(
                    update={
                        "row": row,
                        "row_span": row_span,
                        "column": column,
                        "column_span": column_span,
                    }
                )
            )
    return kept


def _hollow(placed: list[tuple[int, int, bool]]) -> set[int]:
    """The lines (rows or columns, as `placed` gives each cell's first, span and whether it
    holds text) that no one-line cell with text stands in, each kept where a cell with text
    lies in removed lines only."""
    lines = {first + offset for first, span, _ in placed for offset in range(span)}
    removed: set[int] = set()
    for line in sorted(lines):
        if any(first == line and span == 1 and text for first, span, text in placed):
            continue
        stranded = any(
            text
            and first <= line < first + span
            and all(other in removed or other == line for other in range(first, first + span))
            for first, span, text in placed
        )
        if not stranded:
            removed.add(line)
    return removed


def _narrowed(first: int, span: int, removed: set[int]) -> tuple[int, int]:
    """A cell's first line and span once the removed lines are gone (span 0: nothing left)."""
    left = [line for line in range(first, first + span) if line not in removed]
    if not left:
        return first, 0
    return left[0] - sum(line < left[0] for line in removed), len(left)
