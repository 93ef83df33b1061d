"""Text-like ink on a page image, measured on a small grey copy so that it costs a few ms: how
tall the page's glyphs are (idp.document.render_scale) and how much of them the recognized lines
cover (idp.document.ocr.steps.quality)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

# The copy's long side, about: enough to resolve body text of a letter page, small enough that
# the connected components below cost a few ms. Smaller pages are measured as they are.
INK_SIDE: Final = 1000
# Ink is this much darker than the paper (the 95th percentile grey): not a shadow, not a stain.
INK_DROP: Final = 80
_PAPER_PERCENTILE: Final = 0.95

# Components shaped like glyphs for the size estimate: no specks, no rules, no pictures.
_SIZE_MIN_HEIGHT: Final = 3
_SIZE_MAX_HEIGHT: Final = 80
_SIZE_MIN_AREA: Final = 4
_SIZE_MIN_GLYPHS: Final = 8  # fewer glyphs than this say nothing about a page's text size
# A detected line box is this many times the median glyph component's height (fit on real
# scans: the components are x-height letters and capitals, the box adds ascenders and margin).
LINE_PER_GLYPH: Final = 2.1

# Components counted as text for the coverage: lower bounds (a 2-px glyph of small print),
# and nothing filled like a solid shape (a bullet, a logo, a photo's dark area).
_TEXT_MIN_HEIGHT: Final = 2
_TEXT_MAX_HEIGHT: Final = 60
_TEXT_MIN_AREA: Final = 3
_TEXT_MAX_FILL: Final = 0.9
# Line boxes are grown by this share of their height: glyph tops and tails stick out of them.
_BOX_MARGIN: Final = 0.3


@dataclass(frozen=True)
class PageInk:
    """The dark connected components of a page, on its grey copy `factor` times its size."""

    factor: float  # copy pixels per page pixel (≤ 1)
    labels: npt.NDArray[np.int32]  # component label per copy pixel; 0 is paper
    heights: npt.NDArray[np.int32]  # per label (index 0: the paper)
    widths: npt.NDArray[np.int32]
    areas: npt.NDArray[np.int32]
    lefts: npt.NDArray[np.int32]
    tops: npt.NDArray[np.int32]

    @property
    def pixels(self) -> int:
        return int(self.labels.size)

    @property
    def share(self) -> float:
        """The share of the page that is ink of any shape (text, rules, pictures)."""
        return float(self.areas[1:].sum()) / max(self.pixels, 1)


def page_ink(pixels: npt.NDArray[np.uint8], *, side: int = INK_SIDE) -> PageInk:
    """The ink of an RGB (H×W×3) or grey (H×W) page, on a copy whose long side is about
    `side`."""
    import cv2

    height, width = pixels.shape[:2]
    grey = cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY) if pixels.ndim == 3 else pixels
    # A whole-number step: OpenCV averages k×k blocks in ~1 ms, where a fractional one takes ~8.
    step = max(1, round(max(height, width) / side))
    if step > 1:
        size = (max(1, width // step), max(1, height // step))
        grey = cv2.resize(grey, size, interpolation=cv2.INTER_AREA)
    # The paper's grey from a histogram: np.percentile would sort a million pixels.
    counts = np.bincount(grey.ravel(), minlength=256)
    paper = int(np.searchsorted(np.cumsum(counts), _PAPER_PERCENTILE * grey.size))
    ink = (grey < paper - INK_DROP).astype(np.uint8)
    _, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    table: npt.NDArray[np.int32] = np.asarray(stats, dtype=np.int32)
    return PageInk(
        factor=1.0 / step,
        labels=np.asarray(labels, dtype=np.int32),
        heights=table[:, cv2.CC_STAT_HEIGHT],
        widths=table[:, cv2.CC_STAT_WIDTH],
        areas=table[:, cv2.CC_STAT_AREA],
        lefts=table[:, cv2.CC_STAT_LEFT],
        tops=table[:, cv2.CC_STAT_TOP],
    )


def text_line_height(ink: PageInk) -> float | None:
    """The page's likely text line height in page pixels, from its glyph-shaped components;
    None where the page shows too few of them to tell."""
    heights, widths, areas = ink.heights[1:], ink.widths[1:], ink.areas[1:]
    glyph = (
        (heights >= _SIZE_MIN_HEIGHT)
        & (heights <= _SIZE_MAX_HEIGHT)
        & (widths <= 3 * heights + 4)
        & (areas >= _SIZE_MIN_AREA)
    )
    if int(glyph.sum()) < _SIZE_MIN_GLYPHS:
        return None
    return float(np.median(heights[glyph])) * LINE_PER_GLYPH / ink.factor


@dataclass(frozen=True)
class TextInk:
    """How much of a page is text-like ink, and the share of it inside recognized lines."""

    share: float  # of the page's area
    covered: float  # 1.0 where there is no text-like ink


def text_ink_covered(ink: PageInk, boxes: Iterable[Sequence[Sequence[float]]]) -> TextInk:
    """The page's glyph-like ink (not rules, plot lines, frames or dense pictures) and the share
    of it inside one of `boxes` (quads in page pixels)."""
    heights, widths, areas = ink.heights, ink.widths, ink.areas
    fill = areas / np.maximum(heights * widths, 1)
    glyph = (
        (heights >= _TEXT_MIN_HEIGHT)
        & (heights <= _TEXT_MAX_HEIGHT)
        & (widths <= 3 * heights + 6)
        & (areas >= _TEXT_MIN_AREA)
        & (fill <= _TEXT_MAX_FILL)
    )
    glyph[0] = False  # the paper
    text = glyph[ink.labels]
    total = int(text.sum())
    if not total:
        return TextInk(share=0.0, covered=1.0)
    inside = np.zeros(text.shape, dtype=bool)
    for box in boxes:
        corners = np.asarray(box, dtype=np.float64) * ink.factor
        (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
        margin = (y1 - y0) * _BOX_MARGIN + 1
        top, left = max(0, int(y0 - margin)), max(0, int(x0 - margin))
        inside[top : int(y1 + margin) + 1, left : int(x1 + margin) + 1] = True
    return TextInk(share=total / ink.pixels, covered=int((text & inside).sum()) / total)
