"""Long till receipts of known text: a shop's header, many item rows (name left, price right),
totals and a footer, drawn as a thermal printer prints them (576 px wide, ~22-px text).

Each receipt is a tall, narrow page: the shape that a detector limited by its longest side
shrinks out of reading. `receipt(seed, items)` gives the image and its lines; the text of a row
is its name and its price with one space between, which is how a row should read.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final

from PIL import Image, ImageDraw, ImageFont

WIDTH: Final = 576  # an 80 mm thermal printer at 203 dpi
FONT_SIZE: Final = 22
ROW: Final = 34  # pixels from one row of text to the next
MARGIN: Final = 24

_SHOPS: Final = ("CORNER GROCERY LTD", "HARBOUR HARDWARE", "GREEN LEAF PHARMACY", "CITY BAKERY")
_GOODS: Final = (
    "COFFEE BEANS 1KG",
    "OLIVE OIL 500ML",
    "WHOLEMEAL BREAD",
    "FREE RANGE EGGS 12",
    "ORANGE JUICE 1L",
    "BASMATI RICE 2KG",
    "TOMATOES LOOSE",
    "GREEK YOGURT 500G",
    "DISH SOAP LEMON",
    "PAPER TOWELS X4",
    "CHEDDAR CHEESE",
    "PASTA FUSILLI",
    "SPARKLING WATER",
    "BANANAS BUNCH",
    "GREEN TEA 40 BAGS",
    "BATTERIES AA X8",
    "WOOD SCREWS 4X40",
    "HAND CREAM 75ML",
    "DARK CHOCOLATE",
    "ALMOND MILK 1L",
)


@dataclass(frozen=True)
class Receipt:
    image: Image.Image
    lines: list[str]  # the receipt's text, row by row, as it should read
    items: list[tuple[str, str]]  # each item row's name and price


def receipt(seed: int, items: int) -> Receipt:
    """A receipt of `items` item rows (its height follows: ~34 px a row), the same for a seed."""
    chooser = random.Random(seed)  # noqa: S311 - repeatable test data, not secrets
    shop = chooser.choice(_SHOPS)
    rows: list[tuple[str, str]] = [
        (shop, ""),
        (f"{chooser.randint(1, 299)} HIGH STREET", ""),
        (f"RECEIPT {chooser.randint(100, 999999):06d}", ""),
        (
            f"{chooser.randint(1, 28):02d}/{chooser.randint(1, 12):02d}/2026 "
            f"{chooser.randint(7, 21):02d}:{chooser.randint(0, 59):02d}",
            "",
        ),
    ]
    bought: list[tuple[str, str]] = []
    total = 0
    for _ in range(items):
        name = chooser.choice(_GOODS)
        cents = chooser.randint(45, 4999)
        total += cents
        bought.append((name, _money(cents)))
    rows += bought
    rows += [
        ("SUBTOTAL", _money(total)),
        ("VAT 20%", _money(total // 6)),
        ("TOTAL", _money(total)),
        (f"CARD ****{chooser.randint(1000, 9999)}", _money(total)),
        ("THANK YOU FOR SHOPPING", ""),
    ]
    height = 2 * MARGIN + ROW * len(rows)
    image = Image.new("RGB", (WIDTH, height), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=FONT_SIZE)
    for index, (left, right) in enumerate(rows):
        top = MARGIN + index * ROW
        draw.text((MARGIN, top), left, fill="black", font=font)
        if right:
            draw.text(
                (WIDTH - MARGIN - draw.textlength(right, font=font), top),
                right,
                fill="black",
                font=font,
            )
    lines = [f"{left} {right}".strip() for left, right in rows]
    return Receipt(image=image, lines=lines, items=bought)


def _money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"
