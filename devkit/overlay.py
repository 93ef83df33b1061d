"""Draw a job's recognized lines on its page, to see at a glance what the OCR found and where."""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from devkit.client import NoSuchPage
from idp.contract.jobs import JobOptions
from idp.document.decode import open_document


def render_overlay(
    document: bytes, result: dict[str, Any], page_number: int, *, options: JobOptions
) -> Image.Image:
    """The page rasterized as the engine saw it, with each line's box and text drawn on it."""
    pages = {int(page["page"]): page for page in result.get("pages", [])}
    if page_number not in pages:
        raise NoSuchPage(f"the result has no page {page_number} (it has {len(pages)})")
    with open_document(document, pdf_scale=options.pdf_scale) as opened:
        if not 1 <= page_number <= opened.page_count:
            raise NoSuchPage(f"the document has no page {page_number}")
        page = opened.page_image(page_number)
        render = pages[page_number].get("render")
        if page.render is not None and render and render["scale"] != page.render.scale:
            # A page read a second time was read at another scale than the first choice, and
            # its boxes are in that read's pixels.
            page = opened.render_again(page, scale=float(render["scale"]), reason=render["reason"])
        image = Image.fromarray(np.asarray(page.pixels)).convert("RGB")
    draw = ImageDraw.Draw(image, "RGBA")
    font_size = max(12, image.height // 110)
    font = ImageFont.load_default(size=font_size)
    for line in pages[page_number].get("lines", []):
        points = [(float(x), float(y)) for x, y in line["box"]]
        draw.polygon(points, outline=(220, 30, 30, 255), fill=(255, 220, 0, 60), width=2)
        x, y = points[0]
        label = f"{line['text']}  ({float(line['confidence']):.2f})"
        draw.text((x, max(0.0, y - font_size - 2)), label, fill=(0, 90, 200, 255), font=font)
    return image
