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
    filled_columns,
    filled_row_columns,
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
    between = [
        at
        for at in horizontals
        if lines[0].top < at < lines[-1].bottom
        and not any(line.top < at < line.bottom for line in lines)
    ]
    groups = line_groups(lines, columns, gap, between)
    bands: list[list[TextLine]] = [[]]
    for line in lines:
        if bands[-1] and any(bands[-1][-1].bottom <= at <= line.top for at in between):
            bands.append([])
        bands[-1].append(line)
    if len(bands) >= 3:
        single = sum(labels(band, columns, gap) <= 1 for band in bands)
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
