"""A born-digital table's columns: its vertical rulings between its words and the gutters its
words leave; and the lines of running text above or below it that are no part of it. How the
values were set: docs/thresholds.md#text-layer-tables.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from typing import Final, Literal

from idp.document.text_layer.rulings import Ruling
from idp.document.text_layer.table_lines import (
    SNAP_HEIGHTS,
    Box,
    TextLine,
    Word,
    centre_of,
    column_of,
    crossing_rulings,
    is_currency,
    word_runs,
    word_space,
)

# docs/thresholds.md#text-layer-tables
GUTTER_SPACES: Final = 2.0  # a gutter is at least this many word spaces wide
GUTTER_CROSSINGS: Final = 0.15  # at most this share of text lines may cross a gutter
MIN_SIDE_LINES: Final = 2  # a gutter has words of this many lines on each side
CAPTION_GAPS: Final = 1.5  # a caption stands this many times the lines' gap from its table
PROSE_BOUNDARIES: Final = 0.5  # running text crosses this share of the column boundaries


def table_columns(
    lines: Sequence[TextLine],
    words: Sequence[Word],
    rulings: Sequence[Ruling],
    extent: Box,
    height: float,
) -> tuple[list[float], Literal["rulings", "gutters"]]:
    """Column boundaries: the vertical rulings between the words, with the gutters inside the
    ruled columns (LaTeX's |l|rr|); the gutters alone where no ruling parts the words."""
    verticals = crossing_rulings(rulings, extent, horizontal=False, snap=SNAP_HEIGHTS * height)
    strips = gutters(lines, extent, height)
    middles = [boundary for _, _, boundary in strips]
    ruled = ruled_columns(verticals, words, extent, height)
    if ruled is None:
        return _with_amounts(words, [extent[0], *middles, extent[2]]), "gutters"
    unruled = []
    for middle, (start, end, _) in zip(middles, strips, strict=True):
        if not ruled[0] < middle < ruled[-1] or any(start - 2 <= x <= end + 2 for x in ruled):
            continue
        index = column_of(middle, ruled)
        within = [
            TextLine(
                [w for w in line.words if ruled[index] <= centre_of(w.box)[0] < ruled[index + 1]],
                line.top,
                line.bottom,
            )
            for line in lines
        ]
        if columns_beside((start, end), [line for line in within if line.words]):
            unruled.append(middle)
    return _with_amounts(words, sorted({*ruled, *unruled})), "rulings"


def _with_amounts(words: Sequence[Word], columns: list[float]) -> list[float]:
    """The columns less the boundaries that part a currency sign from its amount: a column
    that holds nothing but currency signs ("$" set left of right-aligned figures, or boxed
    apart by a shaded column's edges) joins the column to its right."""
    signs_only = []
    for index in range(len(columns) - 1):
        texts = [  # a header word over the boundary is the two columns' heading, not this one's
            word.text
            for word in words
            if column_of(centre_of(word.box)[0], columns) == index
            and word.box[2] <= columns[index + 1]
        ]
        signs_only.append(bool(texts) and all(is_currency(text) for text in texts))
    inner = [boundary for index, boundary in enumerate(columns[1:-1]) if not signs_only[index]]
    return [columns[0], *inner, columns[-1]]


def ruled_columns(
    verticals: list[float], words: Sequence[Word], extent: Box, height: float
) -> list[float] | None:
    """Column boundaries at the vertical rulings between the table's words; None where every
    such ruling is the table's frame (outside its words), which parts no columns."""
    left = min(word.box[0] for word in words)
    right = max(word.box[2] for word in words)
    margin = SNAP_HEIGHTS * height
    inner = [at for at in verticals if left + margin < at < right - margin]
    if not inner:
        return None
    frame_left = max((at for at in verticals if at <= left + margin), default=left - 1)
    frame_right = min((at for at in verticals if at >= right - margin), default=right + 1)
    return [frame_left, *inner, frame_right]


def gutters(
    lines: Sequence[TextLine], extent: Box, height: float
) -> list[tuple[float, float, float]]:
    """The strips at least GUTTER_SPACES word spaces wide that the words of at most
    GUTTER_CROSSINGS of the lines cross: the gaps between columns, left to right, each with
    where its boundary goes (where the fewest of its lines cross it)."""
    left, right = int(extent[0]), int(extent[2]) + 1
    crossings = [0] * (right - left + 1)
    for line in lines:
        covered = [False] * (right - left + 1)
        for word in line.words:
            for x in range(max(int(word.box[0]), left), min(int(word.box[2]) + 1, right)):
                covered[x - left] = True
        crossings = [count + hit for count, hit in zip(crossings, covered, strict=True)]
    allowed = max(1, int(GUTTER_CROSSINGS * len(lines))) if len(lines) > 3 else 0
    widest = GUTTER_SPACES * word_space(lines, height)
    strips: list[tuple[float, float, float]] = []
    start: int | None = None
    for offset, count in enumerate([*crossings, len(lines) + 1]):
        if count <= allowed and start is None:
            start = offset
        elif count > allowed and start is not None:
            strip = (left + start, left + offset)
            inside = start > 0 and offset < len(crossings)
            if offset - start >= widest and inside and columns_beside(strip, lines):
                strips.append((*strip, left + clearest(crossings[start:offset]) + start))
            start = None
    return strips


def clearest(crossings: list[int]) -> float:
    """The middle of the longest stretch that the fewest lines cross, from the strip's left."""
    fewest = min(crossings)
    best, best_length, start = 0.0, -1, None
    for offset, count in enumerate([*crossings, fewest + 1]):
        if count == fewest and start is None:
            start = offset
        elif count != fewest and start is not None:
            if offset - start > best_length:
                best, best_length = (start + offset) / 2, offset - start
            start = None
    return best


def columns_beside(strip: tuple[float, float], lines: Sequence[TextLine]) -> bool:
    """Whether at least MIN_SIDE_LINES lines have words on each side of the strip: a gap
    after the longest cells of a column, where only a wide header goes on, parts no columns."""
    left = sum(any(word.box[2] <= strip[0] for word in line.words) for line in lines)
    right = sum(any(word.box[0] >= strip[1] for word in line.words) for line in lines)
    return min(left, right) >= min(MIN_SIDE_LINES, len(lines))


def without_prose(lines: list[TextLine], columns: list[float], gap: float) -> list[TextLine]:
    """The lines without those of running text at the top and bottom: a run of words across at
    least PROSE_BOUNDARIES of the table's inner column boundaries (and two); or, set apart from
    the table by a wider gap than its own lines' (CAPTION_GAPS of their median), a line of one
    run across a boundary (a caption, a title)."""
    inner = columns[1:-1]
    reach = max(2, math.ceil(PROSE_BOUNDARIES * len(inner)))
    gaps = [below.top - above.bottom for above, below in itertools.pairwise(lines)]
    apart = CAPTION_GAPS * statistics.median(gaps) if gaps else float("inf")

    def crossed(line: TextLine) -> list[int]:
        return [sum(run[0] < x < run[2] for x in inner) for run in word_runs(line, gap)]

    def prose(line: TextLine, neighbour: TextLine) -> bool:
        runs = crossed(line)
        if any(count >= reach for count in runs):
            return True
        spaced = max(neighbour.top - line.bottom, line.top - neighbour.bottom) >= apart
        return spaced and len(runs) == 1 and runs[0] >= 1

    kept = list(lines)
    while len(kept) > 1 and prose(kept[0], kept[1]):
        kept.pop(0)
    while len(kept) > 1 and prose(kept[-1], kept[-2]):
        kept.pop()
    return kept
