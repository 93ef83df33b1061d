"""Where recognized boxes sit on a page: shared by the orientation, pipeline and overlay tests."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from PIL import Image, ImageDraw

INK_LEVEL = 128  # grey values below this are the page's text


def ink_mask(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("L")) < INK_LEVEL


def ink_inside_boxes(image: Image.Image, boxes: Iterable[Sequence[Sequence[float]]]) -> float:
    """The share of the page's ink pixels that fall inside one of the boxes."""
    mask = Image.new("1", image.size, 0)
    draw = ImageDraw.Draw(mask)
    for box in boxes:
        draw.polygon([(float(x), float(y)) for x, y in box], fill=1)
    ink = ink_mask(image)
    return float((ink & np.asarray(mask, dtype=bool)).sum() / max(1, ink.sum()))


def ink_marked_by_overlay(original: Image.Image, overlay: Image.Image) -> float:
    """The share of the page's ink pixels that an overlay drew over (tinted or outlined)."""
    changed = np.any(
        np.asarray(original.convert("RGB"), dtype=np.int16)
        != np.asarray(overlay.convert("RGB"), dtype=np.int16),
        axis=2,
    )
    ink = ink_mask(original)
    return float((ink & changed).sum() / max(1, ink.sum()))


def reading_direction(box: Sequence[Sequence[float]]) -> tuple[int, int]:
    """box[0] → box[1] as a unit step on the page: (1, 0) reads left to right, (0, -1) upwards."""
    dx = float(box[1][0]) - float(box[0][0])
    dy = float(box[1][1]) - float(box[0][1])
    if abs(dx) >= abs(dy):
        return (1 if dx > 0 else -1, 0)
    return (0, 1 if dy > 0 else -1)
