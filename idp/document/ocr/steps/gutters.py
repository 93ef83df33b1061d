"""Lines a text detector joined across a column gutter, taken apart at the gutter.

A detector that bridges a narrow gutter returns one line for two: the left column's line and
the right column's, side by side. Reading order cannot separate them (each is one recognized
line), so the page reads with its columns interleaved. PP-OCRv5's detector does it now and
then (reading order tolerates up to 3 such lines); PP-OCRv6's does it on a whole column of a
two-column paper.

Such lines give themselves away together: each has a wide space between two of its words, and
those spaces stand one above the other, at the gutter. A single wide space (a justified line, a
tab in a form) does not recur at the same place on several lines. So a line is split where at
least MIN_LINES lines have a space at least MIN_GAP_H line heights wide whose middles lie
within TOLERANCE_H line heights of each other, and where most lines that reach across that
place have such a space there (a title or a full-width paragraph above the columns crosses it
without one). The word boxes come from the recognizer's character positions
(idp.document.ocr.paddle.output.words_on_line); a line without them is left as it is.

A wide space is also at least MIN_GAP_RATIO times the line's usual word space (the median of
its other spaces; the page's, on a line with fewer than 2 others): word boxes are as coarse as
the recognizer's columns, so ordinary word spaces too can stand one above the other.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from idp.contract.quads import is_vertical
from idp.contract.results import Line, Quad, Word

# How these were set: docs/thresholds.md#gutters
MIN_LINES: Final = 4  # lines with a wide space at one place: a gutter
MIN_GAP_H: Final = 0.5  # a wide space, in line heights
TOLERANCE_H: Final = 0.75  # the spaces' middles agree within this many line heights
MIN_GAPPED_SHARE: Final = 0.5  # of the lines reaching across the place, those with the space
MIN_GAP_RATIO: Final = 1.5  # a wide space, in the line's usual word spaces


@dataclass(frozen=True)
class _Gap:
    line: int
    after: int  # the space follows this word
    middle: float
    height: float


def _x_range(quad: Quad) -> tuple[float, float]:
    xs = [x for x, _ in quad]
    return min(xs), max(xs)


def _height(quad: Quad) -> float:
    ys = [y for _, y in quad]
    return max(ys) - min(ys)


def _spaces(line: Line) -> list[float]:
    """The spaces between a line's neighbouring words, in line heights."""
    height = _height(line.box)
    return [
        (_x_range(right.box)[0] - _x_range(left.box)[1]) / height
        for left, right in itertools.pairwise(line.words)
    ]


def _wide_gaps(lines: Sequence[Line]) -> list[_Gap]:
    measured = [
        (index, line, _spaces(line))
        for index, line in enumerate(lines)
        if len(line.words) >= 2 and not is_vertical(line.box) and _height(line.box) > 0
    ]
    everywhere = [space for _, _, spaces in measured for space in spaces]
    page_space = float(np.median(everywhere)) if everywhere else 0.0
    gaps: list[_Gap] = []
    for index, line, spaces in measured:
        height = _height(line.box)
        for after, space in enumerate(spaces):
            others = spaces[:after] + spaces[after + 1 :]
            usual = float(np.median(others)) if len(others) >= 2 else page_space
            if space >= MIN_GAP_H and space >= MIN_GAP_RATIO * usual:
                left, right = line.words[after].box, line.words[after + 1].box
                middle = (_x_range(left)[1] + _x_range(right)[0]) / 2
                gaps.append(_Gap(index, after, middle, height))
    return gaps


def _gutters(lines: Sequence[Line], gaps: list[_Gap]) -> list[list[_Gap]]:
    """Groups of wide spaces one above the other, on enough lines, at a place that most of
    the lines reaching across it have such a space."""
    found: list[list[_Gap]] = []
    remaining = sorted(gaps, key=lambda gap: gap.middle)
    while remaining:
        seed = remaining[0]
        reach = TOLERANCE_H * float(np.median([gap.height for gap in remaining]))
        group = [gap for gap in remaining if abs(gap.middle - seed.middle) <= reach]
        # One space a line: the one nearest the group's middle.
        middle = float(np.median([gap.middle for gap in group]))
        nearest: dict[int, _Gap] = {}
        for gap in group:
            kept = nearest.get(gap.line)
            if kept is None or abs(gap.middle - middle) < abs(kept.middle - middle):
                nearest[gap.line] = gap
        crossing = sum(
            1 for line in lines if _x_range(line.box)[0] < middle < _x_range(line.box)[1]
        )
        if len(nearest) >= MIN_LINES and len(nearest) >= MIN_GAPPED_SHARE * crossing:
            found.append(list(nearest.values()))
        remaining = [gap for gap in remaining if gap not in group]
    return found


def _hull(words: Sequence[Word]) -> Quad:
    """The box around words along a line: from the first word's left edge to the last's right
    edge (their quads follow the line's slant)."""
    first, last = words[0].box, words[-1].box
    return (first[0], last[1], last[2], first[3])


def _parts(line: Line, cuts: Sequence[int]) -> list[Line]:
    bounds = [0, *(after + 1 for after in sorted(cuts)), len(line.words)]
    parts: list[Line] = []
    for start, end in itertools.pairwise(bounds):
        words = line.words[start:end]
        parts.append(
            Line(
                text=" ".join(word.text for word in words),
                box=_hull(words),
                confidence=line.confidence,
                words=list(words),
            )
        )
    return parts


def split_at_gutters(lines: Sequence[Line]) -> list[Line]:
    """The lines, each one that runs across a column gutter split there (in place: the left
    part where the line was, the right part after it)."""
    cuts: dict[int, list[int]] = {}
    for gutter in _gutters(lines, _wide_gaps(lines)):
        for gap in gutter:
            cuts.setdefault(gap.line, []).append(gap.after)
    if not cuts:
        return list(lines)
    out: list[Line] = []
    for index, line in enumerate(lines):
        out.extend(_parts(line, cuts[index]) if index in cuts else [line])
    return out
