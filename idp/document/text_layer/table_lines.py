"""What reading a table from a PDF's words rests on: its words in visual lines and runs, its
word space, and where its rulings part it (text_layer.tables). How the values were set:
docs/thresholds.md#text-layer-tables.
"""

from __future__ import annotations

import itertools
import re
import statistics
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from idp.document.text_layer.rulings import Ruling

Box = tuple[float, float, float, float]  # left, top, right, bottom in rendered page pixels

# docs/thresholds.md#text-layer-tables
SPANS_TABLE: Final = 0.5  # a ruling across this share of the table's extent parts it
# A word space is the lower quartile of a table's gaps between words, or this share of a line's
# height where that is less (a table of one word per cell has only column gaps).
WORD_SPACE_HEIGHTS: Final = 0.35
SNAP_HEIGHTS: Final = 0.25  # rulings this close (line heights) are one line

# An amount: digits with their separators, a sign or parentheses, a percent sign.
_AMOUNT: Final = re.compile(r"[-+\u2212\u2013(]?\d[\d.,'\u2019\u202f\u00a0]*%?\)?")


class Word(Protocol):
    @property
    def text(self) -> str: ...

    @property
    def box(self) -> Box: ...


@dataclass
class TextLine:
    words: list[Word]
    top: float
    bottom: float

    @property
    def height(self) -> float:
        return self.bottom - self.top


def text_lines(words: Sequence[Word]) -> list[TextLine]:
    """Words grouped into visual lines, top to bottom, each left to right. Words of one line of
    the text layer stay together (a small "=" with its neighbours); lines that overlap by half
    the lower one's height, the cells of one row, join."""
    parts: list[list[Word]] = []
    for index, word in enumerate(words):
        line = getattr(word, "line", -1)
        last = parts[-1][-1] if parts else None
        same = last is not None and line >= 0 and getattr(last, "line", -1) == line
        if same and last is not None and height_shared(last.box, word.box) > 0 and index:
            parts[-1].append(word)
        else:
            parts.append([word])
    pieces = sorted(
        (TextLine(ws, min(w.box[1] for w in ws), max(w.box[3] for w in ws)) for ws in parts),
        key=lambda piece: (piece.top + piece.bottom) / 2,
    )
    lines: list[TextLine] = []
    for piece in pieces:
        line = lines[-1] if lines else None
        if line is not None:
            shared = min(line.bottom, piece.bottom) - max(line.top, piece.top)
            if shared >= 0.5 * min(line.height, piece.height):
                line.words += piece.words
                line.top, line.bottom = min(line.top, piece.top), max(line.bottom, piece.bottom)
                continue
        lines.append(piece)
    for line in lines:
        line.words.sort(key=lambda w: w.box[0])
    return lines


def height_shared(a: Box, b: Box) -> float:
    """How far two boxes share their height."""
    return min(a[3], b[3]) - max(a[1], b[1])


def bounds_of(words: Sequence[Word]) -> Box:
    """The box around the words."""
    return (
        min(word.box[0] for word in words),
        min(word.box[1] for word in words),
        max(word.box[2] for word in words),
        max(word.box[3] for word in words),
    )


def centre_of(box: Box) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def holds(box: Box, point: tuple[float, float]) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def word_runs(line: TextLine, gap: float) -> list[Box]:
    """A line's runs of words: words closer than `gap` (a gutter's least width) go together."""
    runs: list[list[float]] = []
    for word in line.words:
        left, top, right, bottom = word.box
        if runs and left - runs[-1][2] < gap:
            run = runs[-1]
            run[1], run[2], run[3] = min(run[1], top), max(run[2], right), max(run[3], bottom)
        else:
            runs.append([left, top, right, bottom])
    return [(run[0], run[1], run[2], run[3]) for run in runs]


def is_currency(text: str) -> bool:
    """Whether the text is a currency sign alone ("$", "€", "R$", "US$"): it belongs to the
    amount beside it, however far a right-aligned column sets that amount off."""
    sign, prefix = text[-1:], text[:-1]
    if not sign or unicodedata.category(sign) != "Sc":
        return False
    return not prefix or (len(prefix) <= 3 and prefix.isalpha() and prefix.isupper())


def is_amount(text: str) -> bool:
    """Whether the text is a number (a currency sign before or after it allowed)."""
    words = [word for word in text.split() if not is_currency(word)]
    return bool(words) and all(_AMOUNT.fullmatch(_unsigned(word)) for word in words)


def _unsigned(word: str) -> str:
    """The word without a currency sign before or after it ("$12", "12€")."""
    if word and unicodedata.category(word[0]) == "Sc":
        word = word[1:]
    if word and unicodedata.category(word[-1]) == "Sc":
        word = word[:-1]
    return word


def cell_texts(line: TextLine, columns: list[float]) -> dict[int, str]:
    """The line's words by the column their centres lie in, each column's joined."""
    texts: dict[int, list[str]] = {}
    for word in line.words:
        texts.setdefault(column_of(centre_of(word.box)[0], columns), []).append(word.text)
    return {column: " ".join(words) for column, words in texts.items()}


def column_of(x: float, columns: list[float]) -> int:
    for index, (left, right) in enumerate(itertools.pairwise(columns)):
        if left <= x < right:
            return index
    return 0 if x < columns[0] else len(columns) - 2


def word_space(lines: Sequence[TextLine], height: float) -> float:
    """The table's word space: the lower quartile of the gaps between neighbouring words on its
    lines, at most WORD_SPACE_HEIGHTS of a line's height (a table of one word per cell has
    only column gaps)."""
    gaps = sorted(
        right.box[0] - left.box[2]
        for line in lines
        for left, right in itertools.pairwise(line.words)
        if right.box[0] > left.box[2]
    )
    typical = WORD_SPACE_HEIGHTS * height
    return min(gaps[len(gaps) // 4], typical) if gaps else typical


def filled_columns(line: TextLine, columns: list[float], gap: float) -> set[int]:
    """The columns the line's runs of words cover."""
    filled: set[int] = set()
    for run in word_runs(line, gap):
        first, last = column_of(run[0] + 1, columns), column_of(run[2] - 1, columns)
        filled.update(range(first, last + 1))
    return filled


def filled_row_columns(row: list[TextLine], columns: list[float], gap: float) -> set[int]:
    return set().union(*(filled_columns(line, columns, gap) for line in row))


def crossing_rulings(
    rulings: Sequence[Ruling],
    extent: Box,
    *,
    horizontal: bool,
    snap: float,
    least: float | None = None,
) -> list[float]:
    """Where rulings of one direction part the table: their positions inside it, merged where
    collinear pieces (one row's stroke each) add up to SPANS_TABLE of its extent (or to `least`
    pixels, for the partial rulings of a grid)."""
    low, high = (extent[0], extent[2]) if horizontal else (extent[1], extent[3])
    across_low, across_high = (extent[1], extent[3]) if horizontal else (extent[0], extent[2])
    pieces = sorted(
        (ruling.at, max(ruling.start, low), min(ruling.end, high))
        for ruling in rulings
        if ruling.horizontal == horizontal
        and across_low - snap <= ruling.at <= across_high + snap
        and min(ruling.end, high) > max(ruling.start, low)
    )
    found: list[float] = []
    group: list[tuple[float, float, float]] = []
    for piece in [*pieces, (float("inf"), 0.0, 0.0)]:
        if group and piece[0] - group[-1][0] > snap:
            covered = covered_length([(start, end) for _, start, end in group])
            if covered >= (SPANS_TABLE * (high - low) if least is None else least):
                found.append(statistics.fmean(at for at, _, _ in group))
            group = []
        group.append(piece)
    return found


def covered_length(spans: list[tuple[float, float]]) -> float:
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def boundaries(positions: list[float], low: float, high: float) -> list[float]:
    """Cell boundaries: the rulings', with the table's edges where no ruling stands."""
    inner = [at for at in positions if low < at < high]
    edges = positions[:1] if positions and positions[0] <= low + 1 else [low]
    last = positions[-1:] if positions and positions[-1] >= high - 1 else [high]
    return sorted({*edges, *inner, *last})
