"""A row that ends in an amount reads as one line: a receipt's item and its price, an invoice's
"Total" and its sum, a statement's entry and its balance.

A text-line detector finds the name at the left and the price at the right as two lines, a
page's width apart. Reading order already puts them side by side (a table block, read row by
row); here the cells of each such row become one line, "COFFEE BEANS 1KG 12.50", so that a
search, a parser or a reader sees the item with its price. Only rows of a table block whose last
cell is a number are joined: a table of words keeps its cells, and prose is never touched. The
joined line keeps every word and its box (result.pdf's text layer, result.textract.json's
WORD blocks); its confidence is its cells' weighted by their length.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from idp.contract.quads import bounds, centre
from idp.contract.results import Block, Line
from idp.document.ocr.engine import PageContent

# An amount, a quantity, a date or a code of digits: currency signs, signs and separators
# around at least one digit, and nothing else.
_NUMBER: Final = re.compile(r"[-+(]?[$€£¥]?\s?\d[\d\s.,:/'-]*%?\)?(?:\s?(?:[$€£¥]|[A-Z]{1,3}))?")
# On one row: centres closer than this share of the lower line's height.
_SAME_ROW: Final = 0.5


def join_amount_rows(content: PageContent) -> PageContent:
    """`content` with each row of its table blocks that ends in a number read as one line."""
    if not any(block.type == "table" for block in content.blocks):
        return content
    lines: list[Line] = []
    blocks: list[Block] = []
    for block in content.blocks:
        members = [content.lines[index] for index in block.lines]
        if block.type == "table":
            joined: list[Line] = []
            for row in _rows(members):
                joined.extend([_joined(row)] if _ends_in_number(row) else row)
            members = joined
        first = len(lines)
        lines.extend(members)
        blocks.append(
            block.model_copy(
                update={
                    "lines": list(range(first, len(lines))),
                    "text": "\n".join(line.text for line in members),
                }
            )
        )
    return replace(content, lines=lines, blocks=blocks)


def _rows(lines: Sequence[Line]) -> list[list[Line]]:
    """Runs of consecutive lines (in reading order) on one row, left to right."""
    rows: list[list[Line]] = []
    for line in lines:
        if rows and _beside(rows[-1][-1], line):
            rows[-1].append(line)
        else:
            rows.append([line])
    return rows


def _beside(left: Line, right: Line) -> bool:
    _, ly0, lx1, ly1 = bounds(left.box)
    rx0, ry0, _, ry1 = bounds(right.box)
    height = min(ly1 - ly0, ry1 - ry0)
    same_row = abs(centre(left.box)[1] - centre(right.box)[1]) < _SAME_ROW * height
    return same_row and rx0 >= lx1 - height  # to its right, not below it


def _ends_in_number(row: Sequence[Line]) -> bool:
    return len(row) > 1 and _NUMBER.fullmatch(row[-1].text.strip()) is not None


def _joined(row: Sequence[Line]) -> Line:
    boxes = [bounds(line.box) for line in row]
    x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
    x1, y1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
    weights = [max(len(line.text), 1) for line in row]
    confidence = sum(w * line.confidence for w, line in zip(weights, row, strict=True))
    words = [word for line in row for word in line.words]
    return Line(
        text=" ".join(line.text for line in row),
        box=((x0, y0), (x1, y0), (x1, y1), (x0, y1)),
        confidence=confidence / sum(weights),
        # Words where every cell measured them; else none (consumers place them by share).
        words=words if all(line.words for line in row) else [],
    )
