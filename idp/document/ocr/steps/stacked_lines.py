"""Lines stacked in one box: a column of short cells that the text detector took for one tall
line, read band by band.

PP-OCRv5's detector can join a table column of short numbers, one per row with nothing beside
them, into one box as tall as all those rows. The recognizer squeezes the box into one line and
reads "43 88 34 65 75 74 72" as "384656472": seven numbers lost, one wrong one written; two rows
of a table set solid come back as one number, or as "$35$" (the recognizer's formula markup).
Such a box is at least 1.6 times as tall as the page's median line, and its ink falls apart into
bands with blank pixel rows between them, each as tall as a glyph. Each band is cut out and read
by the recognizer alone. Where every band reads with a letter or a digit at the recognizer's
confidence, the bands replace the box. A word in large print is one band and stays as it is.
Text turned on its side (a chart's vertical label) falls into bands too, but they are single
turned letters that read with low confidence, so it also stays as read.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

import numpy as np
import numpy.typing as npt

from idp.contract.quads import Bounds, bounds
from idp.contract.results import Line
from idp.document.decode import PageImage
from idp.document.ink import page_ink
from idp.document.ocr.engine import LineReader, PageContent
from idp.document.ocr.steps.missed_text import MIN_CONFIDENCE, MIN_LINES, line_on

MIN_STACK: Final = 1.6
"""A box at least this many times the page's median line height may hold stacked lines
(docs/thresholds.md#stacked-lines)."""
MIN_BAND: Final = 0.35
"""A band of ink at least this share of the median line's height is a line of glyphs (a rule, an
underline or a speck is thinner)."""


def split_stacked_lines(content: PageContent, image: PageImage, reader: LineReader) -> PageContent:
    """`content` with each box of stacked lines replaced by its bands, read one by one (module
    docstring); as it is where there is none, or the engine finds layout."""
    if content.blocks or len(content.lines) < MIN_LINES:
        return content
    boxes = [bounds(line.box) for line in content.lines]
    median = float(np.median([y1 - y0 for _, y0, _, y1 in boxes]))
    lines: list[Line] = []
    split = False
    for line, box in zip(content.lines, boxes, strict=True):
        bands = _bands(image.pixels, box, median) if box[3] - box[1] >= MIN_STACK * median else []
        read = _read_bands(reader, image.pixels, bands)
        lines.extend(read or [line])
        split = split or bool(read)
    return replace(content, lines=lines) if split else content


def _bands(pixels: npt.NDArray[np.uint8], box: Bounds, median: float) -> list[Bounds]:
    """The bands (page pixels) of the box's ink between blank pixel rows, each at least a glyph
    tall; none where the box holds fewer than two."""
    x0, y0 = max(int(box[0]), 0), max(int(box[1]), 0)
    x1, y1 = int(np.ceil(box[2])), int(np.ceil(box[3]))
    crop = pixels[y0:y1, x0:x1]
    if crop.size == 0:
        return []
    ink = page_ink(np.ascontiguousarray(crop), side=max(crop.shape[:2]))
    inked = np.concatenate(([False], (ink.labels > 0).any(axis=1), [False]))
    edges = np.flatnonzero(np.diff(inked.astype(np.int8)))
    bands = [
        (float(x0), float(y0 + top), float(x1), float(y0 + bottom))
        for top, bottom in zip(edges[::2], edges[1::2], strict=True)
        if bottom - top >= MIN_BAND * median
    ]
    return bands if len(bands) >= 2 else []


def _read_bands(
    reader: LineReader, pixels: npt.NDArray[np.uint8], bands: list[Bounds]
) -> list[Line]:
    """A line per band, where every band reads with a letter or a digit at the recognizer's
    confidence; none otherwise."""
    if not bands:
        return []
    crops = [pixels[int(y0) : int(y1), int(x0) : int(x1)] for x0, y0, x1, y1 in bands]
    reads = reader.read_lines(crops)
    if not all(
        confidence >= MIN_CONFIDENCE and any(ch.isalnum() for ch in text)
        for text, confidence in reads
    ):
        return []
    return [
        line_on(band, text.strip(), confidence)
        for band, (text, confidence) in zip(bands, reads, strict=True)
    ]
