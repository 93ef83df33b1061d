"""Lines that read upward: text set on its side, bottom to top, read the right way up.

The recognizer reads a line image lying flat. PaddleOCR turns a line box at least 1.5 times
taller than wide a quarter turn counter-clockwise before reading it: right for text that runs
top to bottom, upside down for text that runs bottom to top, which is how most plotting software
sets a vertical axis's tick labels and title (R's "0.00 0.05 0.10" came out
"900900000000200100000"). Each such box is read once more turned the other way, clockwise, and
once as it stands; where the clockwise read is the surest, it replaces the first, its words
placed along the line from the bottom up. A page where at least half the lines stand on their
side is a page turned, or read turned while its orientation is checked: which way it is read is
the orientation check's to decide (idp.document.ocr.steps.orientation), and it is left as it is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

import numpy as np

from idp.contract.quads import bounds
from idp.contract.results import Line
from idp.document.decode import PageImage
from idp.document.ocr.engine import LineReader, PageContent
from idp.document.ocr.steps.missed_text import words_along

ON_ITS_SIDE: Final = 1.5
"""A box at least this many times taller than wide is read turned (PaddleOCR's own rule)."""


def read_upward_lines(content: PageContent, image: PageImage, reader: LineReader) -> PageContent:
    """`content` with each line on its side read again turned clockwise, the surer read kept
    (module docstring); as it is where there is none, or the engine finds layout."""
    if content.blocks:
        return content
    boxes = [bounds(line.box) for line in content.lines]
    upright = [
        at
        for at, (x0, y0, x1, y1) in enumerate(boxes)
        if y1 - y0 >= ON_ITS_SIDE * max(x1 - x0, 1.0)
    ]
    if 2 * len(upright) >= len(boxes):  # a page turned: the orientation check's to decide
        return content
    crops = [_crop(image, boxes[at]) for at in upright]
    kept = [(at, crop) for at, crop in zip(upright, crops, strict=True) if crop.size]
    if not kept:
        return content
    # Each read turned clockwise, and as it stands: a lone upright "6" in a box taller than
    # wide reads "9" turned, and is no line on its side.
    turned = [np.ascontiguousarray(np.rot90(crop, k=-1)) for _, crop in kept]
    reads = reader.read_lines([*turned, *(crop for _, crop in kept)])
    lines = list(content.lines)
    for (at, _), (read, confidence), (_, standing) in zip(
        kept, reads[: len(kept)], reads[len(kept) :], strict=True
    ):
        if read.strip() and confidence > max(lines[at].confidence, standing):
            lines[at] = _upward(lines[at], read.strip(), confidence)
    return replace(content, lines=lines) if lines != content.lines else content


def _crop(image: PageImage, box: tuple[float, float, float, float]) -> np.ndarray:
    x0, y0, x1, y1 = box
    crop = image.pixels[max(int(y0), 0) : int(np.ceil(y1)), max(int(x0), 0) : int(np.ceil(x1))]
    return np.ascontiguousarray(crop)


def _upward(line: Line, text: str, confidence: float) -> Line:
    """`line` read as `text`, its words placed along it from the bottom up."""
    x0, y0, x1, y1 = bounds(line.box)
    # The box as the text sees it: its top-left is the page box's bottom-left.
    reading = ((x0, y1), (x0, y0), (x1, y0), (x1, y1))
    words = words_along(reading, text, confidence)
    return line.model_copy(update={"text": text, "confidence": confidence, "words": words})
