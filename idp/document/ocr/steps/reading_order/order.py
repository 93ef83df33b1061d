"""Reading order for PP-OCRv5 pages: the page's lines grouped into blocks (paragraphs,
headings, table rows, header, footer) and both put in the order a person reads them. Its
thresholds (geometry.LayoutThresholds), and how they were set: docs/thresholds.md#reading-order.

PaddleOCR orders lines by the y of their top-left corner, so on a page of columns the lines run
straight across the gutter. `read_in_order` orders them by a recursive XY-cut (Nagy & Seth 1984;
Ha, Haralick & Phillips 1995) on the line boxes, hardened for what OCR lines look like; its
projection-profile ideas follow PaddleX's layout_parsing/xycut_enhanced (Apache-2.0, which needs
a layout model's regions), and no code is copied from it.

0. The page is deskewed by the median angle of its long lines. A page whose lines mostly stand
   upright (vertical CJK) or whose letters are mostly right-to-left keeps the engine's order.
1. Header and footer: leading / trailing bands of lines near the top / bottom of the page, no
   taller than body text and set apart from it.
2. The body is cut into horizontal bands at every vertical gap. A vertical cut x = m is tried
   where text edges recur across bands; the run of consecutive bands it does not cross, grown
   around the bands with text on both sides, and with the most such bands, wins. Bands above and
   below are cut the same way, so a title or a full-width caption only splits a page into above
   / columns / below. A few thin lines across the cut are lines merged across a narrow gutter.
3. A gutter separates columns when running text lies on both sides or the two sides are out of
   step; short lines in step on both sides are a table's or form's rows, read row by row, cells
   left to right (a wrapped cell's lines together).
4. What has no cut is one column: rows top to bottom, split into paragraphs at large gaps,
   line-height changes and first-line indents. A paragraph of taller lines is a heading.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from idp.contract.results import Block, Line, Quad
from idp.document.ocr.steps.reading_order.geometry import (
    DEFAULT_THRESHOLDS,
    Floats,
    LayoutThresholds,
    Page,
    bands_of,
    median,
    rows_of,
    upright_geometry,
)
from idp.document.ocr.steps.reading_order.xycut import node


@dataclass(frozen=True)
class ReadingOrder:
    """A page's lines in reading order, and its blocks in that order; each block's `lines`
    index the reordered lines, and every line is in exactly one block."""

    lines: list[Line]
    blocks: list[Block]


def read_in_order(
    lines: Sequence[Line],
    width: int,
    height: int,
    thresholds: LayoutThresholds = DEFAULT_THRESHOLDS,
) -> ReadingOrder:
    """The lines of an upright `width`×`height` page (boxes in its pixel space) grouped into
    blocks, both in reading order. Pages of vertical CJK or right-to-left text keep the order
    they come in, as one `vertical` or `right_to_left` block."""
    if not lines:
        return ReadingOrder(lines=[], blocks=[])
    quads = np.asarray([line.box for line in lines], dtype=np.float64)
    texts = [line.text for line in lines]
    kept = _kept_order(quads, texts)
    if kept is not None:
        groups = [(kept, list(range(len(lines))))]
    elif len(lines) == 1:
        groups = [("paragraph", [0])]
    else:
        groups = _order(upright_geometry(quads, texts, (width, height), thresholds), height)
    order = [index for _, members in groups for index in members]
    if sorted(order) != list(range(len(lines))):
        raise RuntimeError("reading order lost or repeated a line")  # a bug, never input
    position = {index: place for place, index in enumerate(order)}
    blocks = [
        Block(
            type=kind,
            box=_hull(quads[members]),
            text="\n".join(texts[index] for index in members),
            lines=[position[index] for index in members],
        )
        for kind, members in groups
    ]
    return ReadingOrder(lines=[lines[index] for index in order], blocks=blocks)


def _hull(quads: Floats) -> Quad:
    x0, y0 = quads[..., 0].min(), quads[..., 1].min()
    x1, y1 = quads[..., 0].max(), quads[..., 1].max()
    return (
        (float(x0), float(y0)),
        (float(x1), float(y0)),
        (float(x1), float(y1)),
        (float(x0), float(y1)),
    )


# -- pages read as they come ---------------------------------------------------------------------
def _right_to_left(texts: Iterable[str]) -> bool:
    """Most strong characters are Hebrew or Arabic."""
    rtl = ltr = 0
    for text in texts:
        if text.isascii():
            ltr += len(text)
            continue
        for ch in text:
            bidi = unicodedata.bidirectional(ch)
            if bidi in ("R", "AL"):
                rtl += 1
            elif bidi == "L":
                ltr += 1
    return rtl > ltr


def _kept_order(quads: Floats, texts: Sequence[str]) -> str | None:
    """The block kind of a page whose engine order is kept, or None to order it. Columns of
    vertical text and right-to-left rows read mirrored; neither is handled yet."""
    if _right_to_left(texts):
        return "right_to_left"
    width = quads[..., 0].max(axis=1) - quads[..., 0].min(axis=1)
    height = quads[..., 1].max(axis=1) - quads[..., 1].min(axis=1)
    chars = np.array([len(text.strip()) for text in texts])
    if int(((height > 1.5 * width) & (chars >= 2)).sum()) > 0.5 * len(texts):
        return "vertical"
    return None


def _order(pg: Page, height: int) -> list[tuple[str, list[int]]]:
    """(kind, line indices) of each block, in reading order."""
    header, footer, body = _header_footer(pg, list(range(len(pg.texts))), height)
    node(pg, body)
    groups: list[tuple[str, list[int]]] = []
    if header:
        groups.append(("header", [i for row in rows_of(pg, header) for i in row]))
    for kind, members in pg.blocks:
        taller = float(np.median(pg.h[members])) > pg.t.heading_ratio * pg.h_med
        groups.append(("heading" if kind == "paragraph" and taller else kind, members))
    if footer:
        groups.append(("footer", [i for row in rows_of(pg, footer) for i in row]))
    return groups


def _header_footer(pg: Page, idx: list[int], height: int) -> tuple[list[int], list[int], list[int]]:
    """(header, footer, body): leading / trailing bands in the page margins, set apart from
    the body and no taller than its text."""
    bands = bands_of(pg, idx)
    if len(bands) < 3:
        return [], [], idx
    t = pg.t
    gap_min = t.hf_gap_h * pg.h_med

    def small(band: list[int]) -> bool:
        return median([pg.H[i] for i in band]) <= 1.15 * pg.h_med

    n_head = 0
    for k in range(min(3, len(bands) - 2)):
        if pg.bottom(bands[k]) > t.margin_frac * height or not small(bands[k]):
            break
        if pg.top(bands[k + 1]) - pg.bottom(bands[k]) >= gap_min:
            n_head = k + 1
    n_foot = 0
    for k in range(min(3, len(bands) - 2 - n_head)):
        band = bands[len(bands) - 1 - k]
        if pg.top(band) < (1 - t.margin_frac) * height or not small(band):
            break
        if pg.top(band) - pg.bottom(bands[len(bands) - 2 - k]) >= gap_min:
            n_foot = k + 1
    header = [i for band in bands[:n_head] for i in band]
    footer = [i for band in bands[len(bands) - n_foot :] for i in band] if n_foot else []
    apart = set(header) | set(footer)
    return header, footer, [i for i in idx if i not in apart]
