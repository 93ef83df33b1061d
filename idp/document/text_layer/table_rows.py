"""A born-digital table's rows: between its horizontal rulings where they part its rows, else
between its lines of text, a line that only continues the row above staying in it. How the
values were set: docs/thresholds.md#text-layer-tables.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Final, Literal

from idp.document.text_layer.table_lines import (
    Box,
    TextLine,
    boundaries,
    cell_texts,
    column_of,
    filled_columns,
    filled_row_columns,
    is_amount,
    word_runs,
)

# docs/thresholds.md#text-layer-tables
RULED_ROWS: Final = 0.8  # rulings make the rows where this share of their bands hold one row


def table_rows(
    horizontals: list[float],
    lines: Sequence[TextLine],
    columns: list[float],
    extent: Box,
    gap: float,
) -> tuple[list[float], Literal["rulings", "lines"]]:
    """Row boundaries: at the rulings between lines where the bands they make hold one row of
    text each (RULED_ROWS of them, at least three bands), else between the text's rows."""
    between = _between(horizontals, lines)
    groups = _header_joined(line_groups(lines, columns, gap, between), columns, gap, between)
    bands: list[list[TextLine]] = [[]]
    for line in lines:
        if bands[-1] and any(bands[-1][-1].bottom <= at <= line.top for at in between):
            bands.append([])
        bands[-1].append(line)
    if len(bands) >= 3:
        single = sum(
            labels(band, columns, gap) <= 1 and not stacked_amounts(band, columns) for band in bands
        )
        if single >= RULED_ROWS * len(bands):
            low, high = min(extent[1], lines[0].top), max(extent[3], lines[-1].bottom)
            return boundaries(sorted(between), low, high), "rulings"
    bounds = [groups[0][0].top - 1]
    bounds += [(above[-1].bottom + below[0].top) / 2 for above, below in itertools.pairwise(groups)]
    return [*bounds, groups[-1][-1].bottom + 1], "lines"


def labels(band: Sequence[TextLine], columns: list[float], gap: float) -> int:
    """How many labels (first-column texts) a band of lines holds: a line with text in the
    first column starts one, unless it only continues the line above's (one of the two holds
    nothing but its first column: a label wrapped over two lines, or beside the middle of a
    multi-line cell)."""
    labels = 0
    previous: set[int] | None = None
    for line in band:
        filled = filled_columns(line, columns, gap)
        if 0 in filled:
            continues = (
                previous is not None and 0 in previous and (previous == {0} or filled == {0})
            )
            labels += not continues
        previous = filled
    return labels


def parted_unlike_rulings(
    horizontals: list[float], lines: Sequence[TextLine], rows: list[float], columns: list[float]
) -> bool:
    """Whether rows read from the lines disagree with the table's rules: at least three bands
    between its horizontal rulings, half of them or more holding one row each, yet a band of
    several rows that are not records (no figures stacked in it, not every line filling three
    columns): a wrapped cell's lines read as rows of their own. Rules that part groups of
    rows, or set off a header and a total, hold no such band."""
    between = _between(horizontals, lines)
    edges = [lines[0].top, *sorted(between), lines[-1].bottom]
    counts = []
    for low, high in itertools.pairwise(edges):
        inside = [
            (top + bottom) / 2
            for top, bottom in itertools.pairwise(rows)
            if low < (top + bottom) / 2 < high
        ]
        band = [line for line in lines if low < (line.top + line.bottom) / 2 < high]
        records = stacked_amounts(band, columns) or all(
            len(filled_columns(line, columns, 0.0)) >= 3 for line in band
        )
        if inside:
            counts.append((len(inside), len(inside) > 1 and not records))
    singles = sum(count == 1 for count, _ in counts)
    return len(counts) >= 3 and singles >= len(counts) / 2 and any(w for _, w in counts)


def _between(horizontals: list[float], lines: Sequence[TextLine]) -> list[float]:
    """The rulings between the table's lines of text (none through a line)."""
    return [
        at
        for at in horizontals
        if lines[0].top < at < lines[-1].bottom
        and not any(line.top < at < line.bottom for line in lines)
    ]


def stacked_amounts(band: Sequence[TextLine], columns: list[float]) -> bool:
    """Whether a column (not the first) holds numbers on two of the band's lines: a number
    never wraps, so the lines are rows of their own, a rule between groups of them."""
    counts: dict[int, int] = {}
    for line in band:
        for column, text in cell_texts(line, columns).items():
            if column and is_amount(text):
                counts[column] = counts.get(column, 0) + 1
    return any(count >= 2 for count in counts.values())


def _header_joined(
    groups: list[list[TextLine]], columns: list[float], gap: float, breaks: Sequence[float]
) -> list[list[TextLine]]:
    """The rows with a header's wrapped lines joined. Below any lines of headings over several
    columns (each stays a row), lines with nothing in the first column join the first row that
    has a first-column label and headings over every column they fill (a header set on its
    bottom line, as most are), with the lines of several headings each that follow it; none
    of them may hold a figure, cross a column boundary or have a ruling between them."""
    start = 0
    while start < len(groups) and _spanning_heading(groups[start], columns, gap):
        start += 1
    first = next(
        (
            index
            for index in range(start, len(groups))
            if 0 in filled_columns(groups[index][0], columns, gap)
        ),
        start,
    )
    if first == start:
        return groups
    end = first + 1
    while end < len(groups) and _headings(groups[end], columns, gap):
        end += 1
    top = [line for group in groups[start:end] for line in group]
    above = set().union(
        *(filled_columns(line, columns, gap) for group in groups[start:first] for line in group)
    )
    if (
        any(_amounts_in(line, columns) or _spans(line, columns, gap) for line in top)
        or not above <= filled_columns(groups[first][0], columns, gap)
        or any(top[0].bottom <= at <= top[-1].top for at in breaks)
    ):
        return groups
    return [*groups[:start], top, *groups[end:]]


def _spanning_heading(group: list[TextLine], columns: list[float], gap: float) -> bool:
    """Whether the row is headings over several columns each ("Day 1" over two), no label."""
    line = group[0]
    return 0 not in filled_columns(line, columns, gap) and _spans(line, columns, gap)


def _headings(group: list[TextLine], columns: list[float], gap: float) -> bool:
    """Whether the row is one more line of a header: a label and other headings, no figure."""
    line = group[0]
    filled = filled_columns(line, columns, gap)
    return len(group) == 1 and 0 in filled and len(filled) >= 2 and not _amounts_in(line, columns)


def _amounts_in(line: TextLine, columns: list[float]) -> bool:
    """Whether a cell of the line (its words in one column) is a figure."""
    return any(is_amount(text) for text in cell_texts(line, columns).values())


def _spans(line: TextLine, columns: list[float], gap: float) -> bool:
    """Whether a run of the line's words crosses a column boundary (a heading over several)."""
    return any(
        column_of(run[0] + 1, columns) != column_of(run[2] - 1, columns)
        for run in word_runs(line, gap)
    )


def line_groups(
    lines: Sequence[TextLine], columns: list[float], gap: float, breaks: Sequence[float]
) -> list[list[TextLine]]:
    """The lines grouped into the table's rows: a line that only continues the row above (module
    docstring), with no ruling between them, stays in that row."""
    rows: list[list[TextLine]] = []
    for line in lines:
        filled = filled_columns(line, columns, gap)
        if rows and 0 not in filled and filled <= filled_row_columns(rows[-1], columns, gap):
            above = filled_columns(rows[-1][0], columns, gap)
            parted = any(rows[-1][-1].bottom <= at <= line.top for at in breaks)
            if 0 in above and not parted:
                rows[-1].append(line)
                continue
        rows.append([line])
    return rows
