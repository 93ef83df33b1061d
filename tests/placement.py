"""Where recognized boxes sit on a page: shared by the orientation, pipeline and overlay tests."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from PIL import Image, ImageDraw

from idp.contract.jobs import JobOptions
from idp.document.decode import open_document

INK_LEVEL = 128  # grey values below this are the page's text


def page_as_rendered(data: bytes, page: int = 1, options: JobOptions | None = None) -> Image.Image:
    """A page of a document as the pipeline rasterized it: the space result.json's boxes are in."""
    pdf_scale = (options or JobOptions()).pdf_scale
    with open_document(data, pdf_scale=pdf_scale) as document:
        for image in document.pages(page, page):
            return Image.fromarray(image.pixels)
    raise LookupError(f"the document has no page {page}")


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


def overlay_marks(original: Image.Image, overlay: Image.Image) -> tuple[float, float]:
    """(share of the page's ink pixels the overlay drew over, share of the page it drew on)."""
    changed = np.any(
        np.asarray(original.convert("RGB"), dtype=np.int16)
        != np.asarray(overlay.convert("RGB"), dtype=np.int16),
        axis=2,
    )
    ink = ink_mask(original)
    return float((ink & changed).sum() / max(1, ink.sum())), float(changed.mean())


def reading_direction(box: Sequence[Sequence[float]]) -> tuple[int, int]:
    """box[0] → box[1] as a unit step on the page: (1, 0) reads left to right, (0, -1) upwards."""
    dx = float(box[1][0]) - float(box[0][0])
    dy = float(box[1][1]) - float(box[0][1])
    if abs(dx) >= abs(dy):
        return (1 if dx > 0 else -1, 0)
    return (0, 1 if dy > 0 else -1)
