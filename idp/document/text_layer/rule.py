"""Does a page's text layer cover the text the page shows? The measured rule
(docs/searchable-pdf.md: "Text layer").

The cheap signal is ink: the page rendered small and grey (about 3 ms), every dark pixel either
inside the box of a visible text-layer line or not. On a born-digital page nearly all ink is
text the layer holds; a scan has ink and no visible text (its OCR layer, if any, is drawn
invisible, so it explains nothing); a picture of text leaves its ink unexplained.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from idp.document.text_layer.extract import TextLayer

RULE_SCALE: Final = 1.0  # 72 dpi: enough for 2.5 pt print to leave ink
INK_LEVEL: Final = 200  # grey below this is ink (anti-aliased small print is light)
BOX_MARGIN_PX: Final = 1
# Straight ink this long (pixels at RULE_SCALE, ~0.5 in) is a rule or a frame, not text: tables
# and underlines are drawn, not read.
RULE_RUN_PX: Final = 36
# Measured (benchmarks/text_layer.py --rule; docs/searchable-pdf.md, "The rule"): vector pages,
# ruled tables included, 1.00; half a page of vector text above a picture of text 0.49-0.50;
# scans, with or without an invisible OCR layer, 0.00. The threshold sits in that gap, nearer the
# top: a page whose layer misses more than a sixth of its ink is OCR'd.
MIN_TEXT_INK: Final = 0.85
MAX_UNREADABLE: Final = 0.05  # share of the layer's characters with no Unicode meaning


@dataclass(frozen=True)
class Coverage:
    ink_pixels: int
    text_ink: float  # share of the ink inside visible text-layer lines (1.0 on a blank page)
    unreadable: float  # share of the layer's characters that are no real text

    @property
    def layer_covers_page(self) -> bool:
        return self.text_ink >= MIN_TEXT_INK and self.unreadable <= MAX_UNREADABLE


def measure_coverage(page: Any, layer: TextLayer) -> Coverage:
    """Render `page` (a pypdfium2 PdfPage) small and compare its ink with `layer`'s lines."""
    # Never more pixels than the job's own rendering (its pdf_scale) was allowed.
    scale = min(RULE_SCALE, layer.width / page.get_size()[0])
    bitmap = page.render(scale=scale, grayscale=True)
    try:
        grey = bitmap.to_numpy()
        ink = (grey.reshape(grey.shape[0], grey.shape[1], -1)[:, :, 0] < INK_LEVEL).copy()
    finally:
        bitmap.close()
    ink &= ~_straight_rules(ink)
    total = int(ink.sum())
    unreadable = layer.unreadable_chars / layer.chars if layer.chars else 0.0
    if total == 0:
        return Coverage(ink_pixels=0, text_ink=1.0, unreadable=unreadable)
    covered = np.zeros_like(ink)
    ratio = ink.shape[1] / layer.width
    for line in layer.lines:
        left, top, right, bottom = (value * ratio for value in line.box)
        covered[
            max(0, int(top) - BOX_MARGIN_PX) : int(bottom) + 1 + BOX_MARGIN_PX,
            max(0, int(left) - BOX_MARGIN_PX) : int(right) + 1 + BOX_MARGIN_PX,
        ] = True
    text_ink = float((ink & covered).sum()) / total
    return Coverage(ink_pixels=total, text_ink=round(text_ink, 4), unreadable=unreadable)


def _straight_rules(
    ink: np.ndarray[Any, np.dtype[np.bool_]],
) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Pixels on a horizontal or vertical run of ink at least RULE_RUN_PX long."""
    rules = np.zeros_like(ink)
    for axis in (0, 1):
        runs = ink if axis == 1 else ink.T
        marked = rules if axis == 1 else rules.T
        counts = np.cumsum(runs, axis=1, dtype=np.int32)
        counts = np.pad(counts, ((0, 0), (1, 0)))
        full = (counts[:, RULE_RUN_PX:] - counts[:, :-RULE_RUN_PX]) == RULE_RUN_PX
        for shift in range(RULE_RUN_PX):  # every pixel of a full window is on the rule
            marked[:, shift : shift + full.shape[1]] |= full
    return rules
