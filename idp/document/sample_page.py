"""A page of known text drawn with the font bundled in Pillow (the same on every machine): the VL
server's warm-up input, and what the developer kit's generated documents are drawn with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from PIL import Image, ImageDraw, ImageFont

# Three lines of ordinary business prose, with digits and punctuation.
WARM_UP_LINES: Final = (
    "Invoice 2041 was issued on 12 March 2026 to Northwind Traders.",
    "Payment is due within 30 days of the invoice date.",
    "Please quote the order number on every remittance advice.",
)


def render_text_page(
    lines: Sequence[str],
    *,
    size: tuple[int, int],
    font_size: int,
    margin: int,
    line_spacing: float = 1.9,
) -> Image.Image:
    """Black text on a white RGB page, one line of text per row from the top-left margin."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=font_size)
    step = round(font_size * line_spacing)
    for index, line in enumerate(lines):
        top = margin + index * step
        if margin + draw.textlength(line, font=font) > size[0] or top + font_size > size[1]:
            raise ValueError(f"line {index + 1} does not fit on a {size[0]}×{size[1]} page")
        draw.text((margin, top), line, fill="black", font=font)
    return image


def warm_up_page() -> Image.Image:
    """The page the VL server reads once per engine before it reports healthy."""
    return render_text_page(WARM_UP_LINES, size=(1100, 240), font_size=26, margin=30)
