"""A tall page read in tiles, so that its text keeps its size.

The text detector sees a page scaled so that its longest side is at most a limit (1,280 px). On
a page of ordinary shape that keeps 20-px text readable, but a till receipt 576 × 6,000 px
becomes 123 × 1,280 px and its text 5 px high: lines are lost, cut in two, misread. So a page
much taller than wide is read in tiles down its length, each of about the shape of an ordinary
page (the detector scales a tile no more than it would scale a page of that width), overlapping
by enough that every line lies whole in one of them. A line read in two tiles is kept from the
one it lies deeper in: each tile owns the band from the middle of its overlap above to the
middle of its overlap below, and keeps the lines whose centres fall there. Boxes are moved back
onto the page; reading order and the verdict then see one page as usual.

Wide pages are not tiled: their lines run across any cut.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Final

from idp.contract.errors import UnsupportedShape
from idp.contract.results import Line, Quad, Word
from idp.document.budgets import budgets
from idp.document.decode import PageImage
from idp.document.ocr.engine import PageContent

# How the tiles are sized: docs/thresholds.md#tiles
TALL: Final = 2.5  # a page taller than this many times its width is read in tiles
TILE_SHAPE: Final = 1.5  # a tile is at most this many times taller than wide ...
OVERLAP: Final = 0.2  # ... and the tiles overlap by this share of a tile's height,
MIN_OVERLAP: Final = 96  # ... at least this many pixels


def tile_bands(width: int, height: int, detector_side: int) -> list[tuple[int, int]]:
    """The (top, bottom) rows of each tile of a page `width`×`height`; one band, the whole
    page, where it is not tall or is no taller than one tile. A tile is as tall as the
    detector reads without scaling (`detector_side`) or TILE_SHAPE times the width, whichever
    is more; tiles overlap by at most half a tile."""
    tile = max(detector_side, math.ceil(TILE_SHAPE * width))
    if height <= TALL * width or height <= tile:
        return [(0, height)]
    overlap = min(max(MIN_OVERLAP, math.ceil(OVERLAP * tile)), tile // 2)
    step = tile - overlap
    count = math.ceil((height - overlap) / step)
    limit = budgets().max_tiles
    if count > limit:
        raise UnsupportedShape(
            f"the page is {width}×{height} pixels: reading it at its text's size would take "
            f"{count} tiles, more than the {limit} a page may take"
        )
    tops = [min(index * step, height - tile) for index in range(count)]
    return [(top, top + tile) for top in dict.fromkeys(tops)]


def read_in_tiles(
    page: PageImage, recognize: Callable[[PageImage], PageContent], detector_side: int
) -> PageContent:
    """The page recognized whole, or tile by tile where it is tall (module docstring)."""
    bands = tile_bands(page.width, page.height, detector_side)
    # The detector scales its input's longest side down to `detector_side`, never up.
    scale = min(min(1.0, detector_side / max(bottom - top, page.width)) for top, bottom in bands)
    if len(bands) == 1:
        return replace(recognize(page), detector_scale=scale)
    lines: list[Line] = []
    dropped = 0
    for index, (top, bottom) in enumerate(bands):
        tile = PageImage(page=page.page, pixels=page.pixels[top:bottom], render=page.render)
        content = recognize(tile)
        dropped += content.dropped_lines
        # This tile's own band: from the middle of the overlap above to that of the one below.
        own_top = top if index == 0 else (top + bands[index - 1][1]) / 2
        own_bottom = bottom if index == len(bands) - 1 else (bands[index + 1][0] + bottom) / 2
        for line in content.lines:
            centre = top + sum(y for _, y in line.box) / 4
            if own_top <= centre < own_bottom:
                lines.append(_moved(line, top))
    return PageContent(lines=lines, dropped_lines=dropped, detector_scale=scale)


def _moved(line: Line, dy: float) -> Line:
    return line.model_copy(
        update={
            "box": _quad_moved(line.box, dy),
            "words": [_word_moved(word, dy) for word in line.words],
        }
    )


def _word_moved(word: Word, dy: float) -> Word:
    return word.model_copy(update={"box": _quad_moved(word.box, dy)})


def _quad_moved(quad: Quad, dy: float) -> Quad:
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = quad
    return ((x0, y0 + dy), (x1, y1 + dy), (x2, y2 + dy), (x3, y3 + dy))
