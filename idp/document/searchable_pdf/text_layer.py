"""The invisible text of one page: recognized lines placed on their boxes, in reading order.

Boxes come in the rendered page's pixel space (origin top-left); the layer is drawn in the page's
displayed space in points (origin bottom-left), and `display_matrix` maps that onto the PDF
page's own user space, whatever its crop box and /Rotate. Text render mode 3 draws nothing; each
line is scaled horizontally so that its text spans its box, so a viewer's selection and a text
extractor's word boxes fall where the words are seen.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from idp.contract.results import PageResult, Quad
from idp.document.searchable_pdf import font
from idp.document.searchable_pdf.writer import number

FONT_RESOURCE: Final = "IdpOcrText"  # the font's name in a page's resources


@dataclass(frozen=True)
class PageGeometry:
    """A page as displayed, in points, and where its crop box lies in user space."""

    width: float  # displayed (after /Rotate)
    height: float
    crop_box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # llx lly urx ury
    rotate: int = 0  # clockwise degrees: 0, 90, 180, 270

    def display_matrix(self) -> tuple[float, float, float, float, float, float]:
        """The `cm` from displayed space (origin bottom-left, y up) to the page's user space."""
        llx, lly, urx, ury = self.crop_box
        if self.rotate == 90:
            return (0, 1, -1, 0, urx, lly)
        if self.rotate == 180:
            return (-1, 0, 0, -1, urx, ury)
        if self.rotate == 270:
            return (0, -1, 1, 0, llx, ury)
        return (1, 0, 0, 1, llx, lly)


@dataclass(frozen=True)
class _Run:
    text: str
    box: Quad


def text_layer(page: PageResult, geometry: PageGeometry) -> bytes:
    """The content stream drawing the page's text invisibly; empty when it has no text."""
    scale_x = geometry.width / page.width
    scale_y = geometry.height / page.height
    operations: list[str] = []
    for run in _runs(page):
        placed = _place(run, scale_x, scale_y, geometry.height)
        if placed:
            operations.append(placed)
    if not operations:
        return b""
    matrix = " ".join(number(value) for value in geometry.display_matrix())
    return (f"q {matrix} cm BT 3 Tr\n" + "\n".join(operations) + "\nET Q").encode()


def _runs(page: PageResult) -> Iterator[_Run]:
    """Lines when the model gave them; else each text block, its lines spread over its box."""
    if page.lines:
        for line in page.lines:
            yield _Run(line.text, line.box)
        return
    for block in page.blocks:
        text = block.text or block.markdown or ""
        rows = [row.strip() for row in text.splitlines() if row.strip()]
        (x0, y0), (x1, _), (_, y1), _ = _bounds(block.box)
        step = (y1 - y0) / max(len(rows), 1)
        for index, row in enumerate(rows):
            top, bottom = y0 + index * step, y0 + (index + 1) * step
            yield _Run(row, ((x0, top), (x1, top), (x1, bottom), (x0, bottom)))


def _bounds(box: Quad) -> Quad:
    xs = [point[0] for point in box]
    ys = [point[1] for point in box]
    left, top, right, bottom = min(xs), min(ys), max(xs), max(ys)
    return ((left, top), (right, top), (right, bottom), (left, bottom))


def _place(run: _Run, scale_x: float, scale_y: float, page_height: float) -> str:
    """One line: font size from the box height, horizontal scaling to fill the box width,
    rotated like the box's top edge, baseline at its descent above the bottom edge."""
    text = run.text.strip()
    if not text:
        return ""
    # Box corners in displayed points, y up: top-left, top-right, bottom-left.
    (tlx, tly), (trx, try_), _, (blx, bly) = (
        (x * scale_x, page_height - y * scale_y) for x, y in run.box
    )
    width = math.hypot(trx - tlx, try_ - tly)
    height = math.hypot(tlx - blx, tly - bly)
    if width < 0.01 or height < 0.01:
        return ""
    angle = math.atan2(try_ - tly, trx - tlx)
    cos, sin = math.cos(angle), math.sin(angle)
    size = height / (font.ASCENT - font.DESCENT)
    lift = -font.DESCENT * size  # the baseline sits this far above the bottom edge
    baseline_x, baseline_y = blx - sin * lift, bly + cos * lift
    stretch = 100 * width / (len(text) * font.GLYPH_WIDTH * size)
    return (
        f"/{FONT_RESOURCE} {number(size)} Tf {number(stretch)} Tz "
        f"{number(cos)} {number(sin)} {number(-sin)} {number(cos)} "
        f"{number(baseline_x)} {number(baseline_y)} Tm "
        f"{font.encode_text(text).decode()} Tj"
    )
