"""Draw a job's recognized lines on its page, to see at a glance what the OCR found and where."""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from devkit.client import NoSuchPage
from idp.contract.jobs import JobOptions
from idp.document.decode import Document, open_document


def render_overlay(
    document: bytes, result: dict[str, Any], page_number: int, *, options: JobOptions
) -> Image.Image:
    """The page rasterized as the engine saw it, with each line's box and text drawn on it."""
    page = result_page(result, page_number)
    with open_document(document, pdf_scale=options.pdf_scale) as opened:
        image = page_picture(opened, page)
    draw = ImageDraw.Draw(image, "RGBA")
    font_size = max(12, image.height // 110)
    font = ImageFont.load_default(size=font_size)
    for line in page.get("lines", []):
        points = [(float(x), float(y)) for x, y in line["box"]]
        draw.polygon(points, outline=(220, 30, 30, 255), fill=(255, 220, 0, 60), width=2)
        x, y = points[0]
        label = f"{line['text']}  ({float(line['confidence']):.2f})"
        draw.text((x, max(0.0, y - font_size - 2)), label, fill=(0, 90, 200, 255), font=font)
    return image


def result_page(result: dict[str, Any], page_number: int) -> dict[str, Any]:
    pages = {int(page["page"]): page for page in result.get("pages", [])}
    if page_number not in pages:
        raise NoSuchPage(f"the result has no page {page_number} (it has {len(pages)})")
    page: dict[str, Any] = pages[page_number]
    return page


def page_picture(opened: Document, page: dict[str, Any]) -> Image.Image:
    """A result's page rasterized as the engine saw it: its boxes are in this image's pixels.

    Raises the document's JobError where the page cannot be rasterized (UnsupportedShape)."""
    number = int(page["page"])
    if not 1 <= number <= opened.page_count:
        raise NoSuchPage(f"the document has no page {number}")
    image = opened.page_image(number)
    render = page.get("render")
    if image.render is not None and render and render["scale"] != image.render.scale:
        # A page read a second time was read at another scale than the first choice, and its
        # boxes are in that read's pixels.
        image = opened.render_again(image, scale=float(render["scale"]), reason=render["reason"])
    return Image.fromarray(np.asarray(image.pixels)).convert("RGB")
