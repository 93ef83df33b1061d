"""Where things lie on a page that was read turned: the page turned upright, and what was
recognized on it mapped back onto the page as it was uploaded.

`rotation` follows PaddleOCR's doc-orientation `angle`: the degrees the page is turned
counter-clockwise to read it upright (0, 90, 180 or 270).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

import numpy as np

from idp.contract.results import Quad, Rotation
from idp.document.ocr.engine import PageContent

if TYPE_CHECKING:
    import numpy.typing as npt

    Pixels = npt.NDArray[np.uint8]


ROTATIONS: Final[tuple[Rotation, ...]] = (0, 90, 180, 270)


def turn_upright(pixels: Pixels, rotation: Rotation) -> Pixels:
    """The page turned `rotation` degrees counter-clockwise (exact: no resampling)."""
    if rotation == 0:
        return pixels
    return np.ascontiguousarray(np.rot90(pixels, k=rotation // 90))


def point_on_original(
    x: float, y: float, *, rotation: Rotation, width: int, height: int
) -> tuple[float, float]:
    """A point of the upright page, in the pixel space of the original `width`×`height` page."""
    if rotation == 90:
        return (width - y, x)
    if rotation == 180:
        return (width - x, height - y)
    if rotation == 270:
        return (y, height - x)
    return (x, y)


def quad_on_original(box: Quad, *, rotation: Rotation, width: int, height: int) -> Quad:
    """A box of the upright page on the original page. The points keep their order (clockwise
    from the text's own top-left corner), so on a turned page box[0] → box[1] still runs along
    the text's reading direction."""
    p0, p1, p2, p3 = (
        point_on_original(x, y, rotation=rotation, width=width, height=height) for x, y in box
    )
    return (p0, p1, p2, p3)


def content_on_original(
    content: PageContent, *, rotation: Rotation, width: int, height: int
) -> PageContent:
    """What an engine recognized on the upright page, with every box on the original page."""
    if rotation == 0:
        return content

    def move(box: Quad) -> Quad:
        return quad_on_original(box, rotation=rotation, width=width, height=height)

    return replace(
        content,
        lines=[
            line.model_copy(
                update={
                    "box": move(line.box),
                    "words": [
                        word.model_copy(update={"box": move(word.box)}) for word in line.words
                    ],
                }
            )
            for line in content.lines
        ],
        blocks=[block.model_copy(update={"box": move(block.box)}) for block in content.blocks],
        rotation=rotation,
    )
