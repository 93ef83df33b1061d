"""How finely to rasterize a PDF page for OCR, chosen from what the page holds.

A fixed scale throws a scan's resolution away: a 2400-dpi scan on a 1.7-inch page becomes
240×172 px at 2× and reads at ~13 % CER; at its own resolution, bounded, it reads at under 1 %.
So a page carrying a scan renders at the scan's own dpi, bounded to where the detector reads best;
a born-digital page at the job's scale, raised where its fonts would be too small; every page
within a pixel budget. The scale and why it was chosen are recorded (RenderInfo).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from idp.contract.results import RenderInfo

POINTS_PER_INCH: Final = 72.0
# Pixels a page may be rendered to: 4× a letter page at 2×. Beyond this OCR gains nothing
# the detector (≤ 1280 px) and the recognizer (48-px lines) can use, and memory grows.
PIXEL_BUDGET: Final = 16_000_000
# An image covering this share of the page is the page's scan.
SCAN_COVERAGE: Final = 0.25
# A scan renders at its own dpi up to this (a 300-dpi scan: 2× 0.53 % CER, 3× 0.49 %, 4.2×
# 0.45 %: more costs pixels for nothing); never below the job's scale (144 dpi by default),
# because the recognizer reads low-dpi scans better upsampled.
MAX_SCAN_DPI: Final = 216.0
# Fonts: the page's typical text (25th percentile of its text objects' sizes) should be at least
# this many pixels per em at the chosen scale (4.5-pt print at 2×: 1.1 % CER; raised: 0.5 %).
MIN_TEXT_EM_PX: Final = 18.0
MAX_FONT_SCALE: Final = 6.0  # 432 dpi: beyond this no font is too small to read
# A scan whose lines would be fewer pixels high than this is rendered larger, to this height
# (the 2400-dpi typewriter page at 3×: 11-px lines, 12.6 % CER; at 7.4×: 28-px lines, 0.8 %).
MIN_LINE_PX: Final = 16.0
TARGET_LINE_PX: Final = 28.0
# Upsampling a scan past twice its own resolution adds no detail.
MAX_SCAN_UPSAMPLING: Final = 2.0

_MAX_OBJECT_DEPTH: Final = 4  # form XObjects nested deeper than this are not looked into
_MIN_IMAGE_PX: Final = 8  # smaller images are decoration, not scans


@dataclass(frozen=True)
class PageFacts:
    """What a PDF page holds that decides its scale, read from its objects (nothing decoded)."""

    width_pt: float
    height_pt: float
    scan_dpi: float | None = None  # the largest page-covering image's effective dpi
    font_em_pt: float | None = None  # the typical size of its text objects, in points
    pixel_budget: int = PIXEL_BUDGET

    @property
    def budget_scale(self) -> float:
        """The largest scale that keeps the page within its pixel budget."""
        return math.sqrt(self.pixel_budget / max(self.width_pt * self.height_pt, 1.0))


def page_facts(page: Any, *, pixel_budget: int = PIXEL_BUDGET) -> PageFacts:
    """Facts of a pypdfium2 PdfPage: its size, its scan's dpi, its text's font size."""
    import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

    width_pt, height_pt = page.get_size()
    page_area = max(width_pt * height_pt, 1.0)
    scan: tuple[float, float] | None = None  # (coverage, dpi) of the largest image
    font_sizes: list[float] = []
    objects = page.get_objects(
        filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_TEXT],
        max_depth=_MAX_OBJECT_DEPTH,
    )
    for obj in objects:
        matrix = _page_matrix(obj)
        side_x, side_y = math.hypot(matrix.a, matrix.b), math.hypot(matrix.c, matrix.d)
        if obj.type == pdfium_c.FPDF_PAGEOBJ_TEXT:
            size = _font_size(obj) * side_y
            if size > 0.5:
                font_sizes.append(size)
            continue
        pixels = _image_px(obj)
        if pixels is None or side_x < 1 or side_y < 1:
            continue
        coverage = _coverage(matrix, width_pt, height_pt) / page_area
        dpi = min(pixels[0] / side_x, pixels[1] / side_y) * POINTS_PER_INCH
        if coverage >= SCAN_COVERAGE and (scan is None or coverage > scan[0]):
            scan = (coverage, dpi)
    return PageFacts(
        width_pt=width_pt,
        height_pt=height_pt,
        scan_dpi=scan[1] if scan else None,
        font_em_pt=float(np.percentile(font_sizes, 25)) if font_sizes else None,
        pixel_budget=pixel_budget,
    )


def choose_scale(facts: PageFacts, base: float) -> RenderInfo:
    """The scale to render a page at, from its facts; `base` is the job's scale (pdf_scale),
    kept by vector pages and the least a scan gets."""
    if facts.scan_dpi is not None:
        own = facts.scan_dpi / POINTS_PER_INCH
        scale = min(max(own, base), max(MAX_SCAN_DPI / POINTS_PER_INCH, base))
        reason = f"scan at {facts.scan_dpi:.0f} dpi"
    else:
        scale = base
        reason = "vector page"
    if facts.font_em_pt is not None and facts.font_em_pt * scale < MIN_TEXT_EM_PX:
        scale = min(MIN_TEXT_EM_PX / facts.font_em_pt, max(MAX_FONT_SCALE, base))
        reason += f"; small print {facts.font_em_pt:.1f} pt"
    return _within_budget(facts, scale, reason)


def needs_text_check(facts: PageFacts) -> bool:
    """Whether the page's text size must be measured on its pixels: it has no fonts to tell."""
    return facts.font_em_pt is None


def raised_for_small_text(
    facts: PageFacts, render: RenderInfo, line_px: float | None
) -> RenderInfo | None:
    """A higher scale for a page whose text lines measure `line_px` high at `render.scale`
    (idp.document.ink.text_line_height), or None where they are tall enough or cannot grow."""
    if line_px is None or line_px >= MIN_LINE_PX:
        return None
    wanted = render.scale * TARGET_LINE_PX / max(line_px, 1.0)
    top = _upsampling_limit(facts.scan_dpi, render.scale)
    reason = f"{render.reason}; text {line_px:.0f} px at {render.scale:.2f}x"
    raised = _within_budget(facts, min(wanted, top), reason)
    return raised if raised.scale > render.scale * 1.05 else None


def higher_scale(render: RenderInfo, width_px: int, height_px: int, line_px: float) -> float | None:
    """A scale for reading a rendered page again whose lines came out `line_px` high, or None
    where it cannot rise enough to matter (budget, or a scan already at twice its own dpi)."""
    width_pt, height_pt = width_px / render.scale, height_px / render.scale
    facts = PageFacts(width_pt=width_pt, height_pt=height_pt, scan_dpi=render.scan_dpi)
    wanted = render.scale * TARGET_LINE_PX / max(line_px, 1.0)
    top = min(_upsampling_limit(render.scan_dpi, render.scale), facts.budget_scale)
    scale = math.floor(min(wanted, top) * 1000) / 1000
    # A rise under a quarter changes the recognizer's input too little to read differently.
    return scale if scale >= render.scale * 1.25 else None


def _upsampling_limit(scan_dpi: float | None, scale: float) -> float:
    if scan_dpi is None:
        return math.inf
    return max(scale, MAX_SCAN_UPSAMPLING * scan_dpi / POINTS_PER_INCH)


def _within_budget(facts: PageFacts, scale: float, reason: str) -> RenderInfo:
    budget = math.floor(facts.budget_scale * 1000) / 1000  # rounded down: never over it
    if scale > budget:
        scale = budget
        reason += "; pixel budget"
    return RenderInfo(scale=round(scale, 3), reason=reason, scan_dpi=_rounded(facts.scan_dpi))


def _rounded(dpi: float | None) -> float | None:
    return None if dpi is None else round(dpi, 1)


def _page_matrix(obj: Any) -> Any:
    """The object's matrix in page space: a form XObject's content is placed by its container."""
    matrix = obj.get_matrix()
    container = obj.container
    while container is not None:
        matrix = matrix.multiply(container.get_matrix())
        container = container.container
    return matrix


def _font_size(obj: Any) -> float:
    import pypdfium2

    try:
        return float(obj.get_font_size())
    except pypdfium2.PdfiumError:
        return 0.0


def _image_px(obj: Any) -> tuple[int, int] | None:
    """The image's own size in pixels (read from its dictionary, not decoded)."""
    import pypdfium2

    try:
        width, height = obj.get_px_size()
    except pypdfium2.PdfiumError:
        return None
    if width < _MIN_IMAGE_PX or height < _MIN_IMAGE_PX:
        return None
    return int(width), int(height)


def _coverage(matrix: Any, width_pt: float, height_pt: float) -> float:
    """Area (pt²) of the page the unit square under `matrix` covers, clipped to the page."""
    xs = [matrix.e + matrix.a * x + matrix.c * y for x, y in ((0, 0), (1, 0), (0, 1), (1, 1))]
    ys = [matrix.f + matrix.b * x + matrix.d * y for x, y in ((0, 0), (1, 0), (0, 1), (1, 1))]
    x0, x1 = max(0.0, min(xs)), min(width_pt, max(xs))
    y0, y1 = max(0.0, min(ys)), min(height_pt, max(ys))
    return float(max(0.0, x1 - x0) * max(0.0, y1 - y0))
