"""Tables the layout model missed on a page read from its pixels, found from its text's alignment.

The rule is the one a born-digital page's words go through (text_layer.table_alignment): lines
outside every table, figure, header and footer whose runs of words stand in columns, one column
of them values, are a table; its grid comes from their gutters and lines (text_layer.tables).
Here the words are the OCR's lines (a run of words each: the detector's boxes stop at gutters).
Such a table is read from where its text stands, not by a table model: the page goes to review
(TABLE_MISSED), with the table there to check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from idp.contract.quads import area, bounds, hull, overlap
from idp.contract.results import Line, Quad
from idp.document.ocr.steps.regions import LABEL_TYPES, Region
from idp.document.ocr.steps.tables import html_table
from idp.document.text_layer.table_alignment import aligned_tables
from idp.document.text_layer.table_lines import Box
from idp.document.text_layer.tables import read_table

# Where no table is sought, on a scan as on a born-digital page: in a table, and among a
# figure's labels (a plot's ticks) or the page's header and footer (an address in columns).
NOT_SOUGHT: Final = frozenset({"table", "figure", "header", "footer"})
WITHIN_TABLE: Final = 0.6  # a region this much inside a table is part of it


@dataclass(frozen=True)
class LineWord:
    """A word (or a line read as one run of words) with its box, as the table rules take it."""

    text: str
    box: Box


def line_words(lines: Sequence[Line]) -> list[LineWord]:
    """The lines' words with their boxes; a line without word boxes as one word."""
    words: list[LineWord] = []
    for line in lines:
        if line.words:
            words += [LineWord(word.text, bounds(word.box)) for word in line.words]
        else:
            words.append(LineWord(line.text, bounds(line.box)))
    return words


def with_aligned_tables(
    regions: Sequence[Region], lines: Sequence[Line]
) -> tuple[list[Region], int]:
    """The regions with a table region for each table the lines' alignment shows outside the
    regions that hold none (module docstring), each placed in the reading order where its
    text was; a region lying in such a table (a cell the layout called a paragraph) gives way.
    Also how many tables were found."""
    taken = [bounds(r.box) for r in regions if LABEL_TYPES.get(r.label, "text") in NOT_SOUGHT]
    words = line_words(lines)
    found: list[Region] = []
    for box in aligned_tables(words, taken):
        read = read_table(box, words, ())
        if read is None or not read.cells:
            continue
        cells = read.cells
        found.append(
            Region(
                label="table",
                box=hull([cell.box for cell in cells if cell.box is not None]),
                html=html_table(cells),
                cell_boxes=[cell.box for cell in cells],
            )
        )
    boxes = [bounds(region.box) for region in found]
    placed = [
        region
        for region in regions
        if all(share_inside(bounds(region.box), box) < WITHIN_TABLE for box in boxes)
    ]
    for region in found:
        placed.insert(_place(placed, region.box), region)
    return placed, len(found)


def _place(regions: Sequence[Region], box: Quad) -> int:
    """Where the table goes in the reading order: after a region it lies in (the paragraph
    around it), before the first it overlaps otherwise, else before the first region below
    it; last where there is none."""
    table = bounds(box)
    for index, region in enumerate(regions):
        other = bounds(region.box)
        if overlap(table, other) > 0:
            return index + 1 if other[1] < table[1] else index
    for index, region in enumerate(regions):
        other = bounds(region.box)
        if other[1] >= table[3] and other[0] < table[2] and table[0] < other[2]:
            return index
    return len(regions)


def share_inside(box: Box, outer: Box) -> float:
    """The share of `box` that lies inside `outer`."""
    size = area(box)
    return overlap(box, outer) / size if size > 0 else 0.0
