"""Text the detector passed over: glyph-shaped ink in the row of a recognized line but outside
every line, read by the engine's recognizer alone.

A text detector (PP-OCRv5's and PP-OCRv6's DB) leaves out short marks standing alone in wide
space: the "0" and "1" cells of a table of counts, the "1 -1" of a sparse matrix among its dots,
the rest of a row after a wide gap (most of the numbers PP-OCRv5 loses:
docs/thresholds.md#missed-text). Such ink lies in the row of a line that was found (a table's
row, a printed matrix's row), so it is looked for there alone: a figure's markers and curves, a
logo or dust elsewhere on the page are never read. Each run of such ink is cut out at the row's
height and read; what reads as a letter or a digit with the recognizer's confidence becomes a
line of its own, and every later step treats it as any other.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

import numpy as np
import numpy.typing as npt

from idp.contract.quads import Bounds, bounds, quad_span
from idp.contract.results import Line, Quad, Word
from idp.document.decode import PageImage
from idp.document.ink import PageInk, page_ink
from idp.document.ocr.engine import LineReader, PageContent

# The ink is measured on a copy this long: a thin "1" of small print at 200 dpi keeps its stroke.
INK_SIDE: Final = 2000
MIN_CONFIDENCE: Final = 0.90
"""Least recognizer confidence for a run of missed ink to become a line (a dust speck or a rule's
end reads, where it reads at all, well under it)."""
# A glyph of the row: at least this share of the row line's height (not a dot, a speck or a
# leader), at most its whole height, no wider than a few glyphs, not a filled shape.
MIN_GLYPH_HEIGHT: Final = 0.35
MAX_GLYPH_HEIGHT: Final = 1.0
_MAX_FILL: Final = 0.9
# Ink this close to a line (a share of its height) is that line's: its glyphs' tops and tails.
_LINE_MARGIN: Final = 0.3
# Missed glyphs this close along a row (a share of the row line's height) are one run: a
# word space is narrower, a table's column gap wider.
_RUN_GAP: Final = 0.8
_MARK_GAP: Final = 0.25  # a mark (a minus, a dot) this close to a glyph is part of its word
_PAD: Final = 0.2  # cut out with this share of the row's height on each side
MIN_LINES: Final = 3  # fewer lines than this tell nothing of the page's rows
_PAIRS: Final = 2_000_000  # pieces of ink × lines compared at once


def read_missed_text(content: PageContent, image: PageImage, reader: LineReader) -> PageContent:
    """`content` with a line for each run of glyph ink the detector left out of a recognized
    line's row (module docstring); as it is where there is none, or the engine finds layout."""
    if content.blocks or len(content.lines) < MIN_LINES:
        return content
    boxes = np.array([bounds(line.box) for line in content.lines], dtype=np.float64)
    runs = _missed_runs(page_ink(image.pixels, side=INK_SIDE), boxes)
    if not runs:
        return content
    pixels = image.pixels
    crops = [
        pixels[int(y0) : int(np.ceil(y1)), int(x0) : int(np.ceil(x1))] for x0, y0, x1, y1 in runs
    ]
    found = [
        line_on(run, text.strip(), confidence)
        for run, (text, confidence) in zip(runs, reader.read_lines(crops), strict=True)
        if confidence >= MIN_CONFIDENCE and any(ch.isalnum() for ch in text)
    ]
    return replace(content, lines=[*content.lines, *found]) if found else content


def _missed_runs(ink: PageInk, lines: npt.NDArray[np.float64]) -> list[Bounds]:
    """Bounds (page pixels, padded) of each run of ink outside every line box but in the row of
    one, with a glyph in it, as tall as that row's line."""
    scale = 1.0 / ink.factor
    x0, y0 = ink.lefts[1:] * scale, ink.tops[1:] * scale
    x1, y1 = x0 + ink.widths[1:] * scale, y0 + ink.heights[1:] * scale
    fill = ink.areas[1:] / np.maximum(ink.widths[1:] * ink.heights[1:], 1)
    pieces = np.column_stack((x0, y0, x1, y1, fill))
    # components × lines at once, a slice of the components at a time (a long receipt has
    # thousands of each)
    step = max(1, _PAIRS // len(lines))
    owned = [_owners(pieces[at : at + step], lines) for at in range(0, len(pieces), step)]
    owner = np.concatenate([o for o, _ in owned]) if owned else np.empty(0, dtype=np.intp)
    is_glyph = np.concatenate([g for _, g in owned]) if owned else np.empty(0, dtype=bool)
    runs: list[Bounds] = []
    for line in np.unique(owner[owner >= 0]):
        mine = np.flatnonzero(owner == line)
        mine = mine[np.argsort(x0[mine])]
        top, bottom = float(lines[line, 1]), float(lines[line, 3])
        # A mark joins the glyph it touches ("-1"); glyphs join across a word space.
        both = is_glyph[mine[1:]] & is_glyph[mine[:-1]]
        gap = np.where(both, _RUN_GAP, _MARK_GAP) * (bottom - top)
        cuts = np.flatnonzero(x0[mine[1:]] - np.maximum.accumulate(x1[mine])[:-1] > gap) + 1
        pad = _PAD * (bottom - top)
        for run in np.split(mine, cuts):
            if is_glyph[run].any():
                start, end = float(x0[run].min()), float(x1[run].max())
                runs.append((max(start - pad, 0.0), top, end + pad, bottom))
    return _merged(runs)


def _merged(runs: list[Bounds]) -> list[Bounds]:
    """The runs, those that overlap (one word's glyphs in the rows of two lines that overlap)
    as one."""
    merged: list[Bounds] = []
    for run in sorted(runs):
        for at, kept in enumerate(merged):
            if _overlap(run, kept):
                merged[at] = (
                    min(run[0], kept[0]),
                    min(run[1], kept[1]),
                    max(run[2], kept[2]),
                    max(run[3], kept[3]),
                )
                break
        else:
            merged.append(run)
    return merged


def _overlap(a: Bounds, b: Bounds) -> bool:
    across = min(a[2], b[2]) - max(a[0], b[0])
    down = min(a[3], b[3]) - max(a[1], b[1])
    return across > 0 and down > 0.5 * min(a[3] - a[1], b[3] - b[1])


def _owners(
    pieces: npt.NDArray[np.float64], lines: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
    """Per piece of ink (x0, y0, x1, y1, fill): the line in whose row it was missed (-1 where
    none: inside a line, in no row, or no glyph or mark of that row's size), and whether it is
    a glyph there."""
    x0, y0, x1, y1, fill = (pieces[:, k, None] for k in range(5))
    cx, cy, width, height = (x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0
    left, top, right, bottom = (lines[None, :, k] for k in range(4))
    tall = bottom - top
    margin = tall * _LINE_MARGIN
    # A glyph's top or tail sticks out of its line's box; a glyph of the row above or below,
    # where two rows' boxes come close, lies mostly outside it.
    within = np.minimum(y1, bottom) - np.maximum(y0, top)
    inside = (
        (cx >= left - margin)
        & (cx <= right + margin)
        & (cy >= top - margin)
        & (cy <= bottom + margin)
        & (within >= 0.5 * (y1 - y0))
    )
    in_row = (cy >= top) & (cy <= bottom)
    glyph = (
        (height >= MIN_GLYPH_HEIGHT * tall)
        & (height <= MAX_GLYPH_HEIGHT * tall)
        & (width <= 3 * height + 6)
        & (fill <= _MAX_FILL)
    )
    # Marks too small to be glyphs (a minus, a dot, a comma) join a run, and start none.
    mark = (height < MIN_GLYPH_HEIGHT * tall) & (width <= tall)
    candidate = in_row & (glyph | mark) & ~inside.any(axis=1, keepdims=True)
    # Each in the row of the line whose centre is nearest its own (by height).
    distance = np.where(candidate, np.abs(cy - (top + bottom) / 2), np.inf)
    nearest = np.argmin(distance, axis=1)
    rows = np.arange(len(pieces))
    owner = np.where(np.isfinite(distance[rows, nearest]), nearest, -1)
    return owner, glyph[rows, nearest] & (owner >= 0)


def line_on(box: Bounds, text: str, confidence: float) -> Line:
    """A line of `text` read on its own in `box`, its words placed by their share of the text."""
    x0, y0, x1, y1 = box
    quad = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    return Line(
        text=text, box=quad, confidence=confidence, words=words_along(quad, text, confidence)
    )


def words_along(quad: Quad, text: str, confidence: float) -> list[Word]:
    """The words of `text`, read as one line in `quad` (clockwise from the text's own top-left),
    each placed along it by its share of the text."""
    size = len(text)
    words = []
    at = 0
    for token in text.split():
        start = text.index(token, at)
        at = start + len(token)
        box = quad_span(quad, start / size, at / size, vertical=False)
        words.append(Word(text=token, box=box, confidence=confidence))
    return words
