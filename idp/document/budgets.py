"""How large an image each step may make, in one place, sized from the function's memory.

A file's bytes say little about the memory it takes: a 203-byte PNG can declare 60,000 × 2
pixels, and a step that scales a page by its short side (the page classifier scales it to 256 px)
turns that into billions of pixels. So every step that makes an image computes its size first and
keeps to a budget here, before it allocates:

- decoding and rendering: a page holds at most `page_pixels` (IMAGE_TOO_LARGE beyond), and its
  shape must be one that can hold text (`check_shape`: IMAGE_SHAPE_UNSUPPORTED otherwise);
- every working copy a step makes of a page (the classifier's input, the tiles of a tall page,
  a second read's rendering) holds at most `working_pixels`, or is scaled down to fit;
- the detector sees a tall page in tiles (idp.document.ocr.steps.tiles), so its text keeps its
  size: at most `max_tiles` of them.

The recognizer's line images are bounded by the library itself (PaddleX scales a line to 48 px
high and at most 3,200 px wide).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from functools import cache
from typing import Final

from idp.contract import names
from idp.contract.errors import ImageTooLarge, UnsupportedShape
from idp.contract.topology import PROCESSOR_MEMORY_MB

MEMORY_ENV: Final = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"  # set by Lambda in every function


@dataclass(frozen=True)
class ImageBudgets:
    """The sizes the image steps keep to, for a function of `memory_mb`."""

    memory_mb: int
    page_pixels: int
    # A working copy is a page's size or less, or this many pixels (a 224-px classifier window
    # stretched along a long page is well within it).
    working_pixels: int = 16_000_000
    # A page narrower than this holds no line of text a recognizer can read (its lines are 48 px
    # high; PP-OCR reads text down to about 8 px).
    min_short_side: int = 8
    # Longest side over shortest beyond which a page is no page: a 576-px receipt 57 m long.
    max_aspect: float = 100.0

    @property
    def max_tiles(self) -> int:
        """Detector tiles of a tall page: one per short side and a half, at the longest aspect."""
        return math.ceil(self.max_aspect / 1.5) + 1

    def check_pixels(self, width: int, height: int, what: str) -> None:
        """ImageTooLarge where a page of this size would not fit the page budget."""
        if width * height > self.page_pixels:
            raise ImageTooLarge(
                f"the {what} is {width}×{height} pixels ({width * height / 1e6:.0f} MP); "
                f"the limit is {self.page_pixels / 1e6:.0f} MP per page"
            )

    def check_shape(self, width: int, height: int, what: str) -> None:
        """UnsupportedShape where a page of this shape cannot hold a readable line of text."""
        short, long = sorted((width, height))
        if short < self.min_short_side:
            raise UnsupportedShape(
                f"the {what} is {width}×{height} pixels: {short} px across is too thin to hold "
                f"a line of text (a page needs at least {self.min_short_side} px on its short side)"
            )
        if long > self.max_aspect * short:
            raise UnsupportedShape(
                f"the {what} is {width}×{height} pixels, {long / short:.0f} times longer than "
                f"wide; pages up to {self.max_aspect:.0f}:1 are read (a long receipt is ~20:1)"
            )

    def fit(self, width: int, height: int, scale: float) -> tuple[int, int]:
        """`width`×`height` scaled by `scale`, or by less where that would exceed the working
        budget; each side at least 1 px."""
        area = width * height * scale * scale
        if area > self.working_pixels:
            scale *= math.sqrt(self.working_pixels / area)
        return max(1, round(width * scale)), max(1, round(height * scale))


# What a warm worker holds before it opens a document: the runtime, one text-line engine and the
# orientation models (~0.4 GB on ONNX Runtime, ~1.2 GB on Paddle) with room for PP-StructureV3's
# peak (2.1 GB in the image: benchmarks/structure_image.py).
ENGINE_RESERVE_MB: Final = 2200
# Peak bytes a page's pixel costs through every step at once (its RGB copy, the grey and ink
# masks of the verdict, the detector's and classifier's inputs): a 30-MP and a 60-MP page peak
# 567 and 876 MB above the warm engine through the OCR path, 19 and 15 bytes a pixel; 24 leaves
# room for the searchable PDF's encoding of the page.
BYTES_PER_PAGE_PIXEL: Final = 24


def budgets_for(memory_mb: int) -> ImageBudgets:
    """The budgets of a function with `memory_mb` of memory: a page may take what the warm
    engine leaves, up to the pipeline's own limit (names.MAX_IMAGE_PIXELS)."""
    spare = max(memory_mb - ENGINE_RESERVE_MB, 256) * 1024 * 1024
    page = min(names.MAX_IMAGE_PIXELS, spare // BYTES_PER_PAGE_PIXEL)
    return ImageBudgets(memory_mb=memory_mb, page_pixels=int(page))


@cache
def budgets() -> ImageBudgets:
    """This process's budgets, from its function's memory (the processor's setting when not on
    Lambda)."""
    memory = os.environ.get(MEMORY_ENV, "")
    return budgets_for(int(memory) if memory.isdigit() else PROCESSOR_MEMORY_MB)
