"""A layout model's regions as the page's blocks: typed, in the model's reading order, each with
its lines, a table with its cells; the page's lines put in that order; the page's Markdown.

Layout models label regions in their own words (PP-DocLayout: doc_title, paragraph_title,
image, figure_title, number, …). Each becomes one of LAYOUT_BLOCK_TYPES, keeping the model's
label beside it. A line belongs to the innermost region holding its centre, a table's line to
the cell holding it; the page's lines are then read region by region and a table cell by cell,
row by row, so the page's text, its searchable PDF and result.textract.json follow the layout.
Lines outside every region are read last, as a text block of their own (label None).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from idp.contract.quads import area, bounds, centre, contains, hull
from idp.contract.results import Block, Line, Point, Quad, TableCell
from idp.document.ocr.steps.tables import cells_of_html, markdown_table

# Layout labels (PP-DocLayout's, PaddleOCR-VL's) → block type; any other label is text.
LABEL_TYPES: Final[Mapping[str, str]] = {
    "doc_title": "title",
    "paragraph_title": "title",
    "table": "table",
    "image": "figure",
    "chart": "figure",
    "seal": "figure",
    "figure_title": "caption",
    "table_title": "caption",
    "chart_title": "caption",
    "figure_table_chart_title": "caption",
    "header": "header",
    "header_image": "header",
    "footer": "footer",
    "footer_image": "footer",
    "number": "footer",
    "formula": "formula",
    "display_formula": "formula",
    "inline_formula": "formula",
}
# A text region whose lines mostly start like list items is a list.
_LIST_ITEM: Final = re.compile(r"^\s*(?:[•·▪◦‣●○■□\-–—*]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)])\s")
_LIST_SHARE: Final = 0.6
_NOT_IN_MARKDOWN: Final = frozenset({"figure", "header", "footer"})
_HYPHENATED: Final = re.compile(r"[^\W\d_]-$")  # a letter, then a hyphen, at the line's end


@dataclass(frozen=True)
class Region:
    """A region as a layout pipeline returns it, in its reading order."""

    label: str
    box: Quad
    text: str | None = None  # the pipeline's own text of it (used where it read no lines)
    html: str | None = None  # a table's
    cell_boxes: Sequence[Quad | None] = ()  # a table's cells, in its HTML's order


@dataclass
class LaidOut:
    """A page's lines in the layout's reading order, its blocks naming them, its Markdown."""

    lines: list[Line]
    blocks: list[Block]
    markdown: str


@dataclass
class _Placed:
    region: Region | None
    type: str
    lines: list[int] = field(default_factory=list)
    cells: list[TableCell] = field(default_factory=list)


def block_type(label: str, lines: Sequence[Line] = ()) -> str:
    kind = LABEL_TYPES.get(label, "text")
    if kind == "text" and len(lines) >= 2:
        items = sum(bool(_LIST_ITEM.match(line.text)) for line in lines)
        if items >= _LIST_SHARE * len(lines):
            return "list"
    return kind


def lay_out(regions: Sequence[Region], lines: Sequence[Line]) -> LaidOut:
    """The page's blocks from its regions and lines (module docstring)."""
    placed = [
        _Placed(region, LABEL_TYPES.get(region.label, "text"), cells=_cells(region))
        for region in regions
    ]
    loose = _Placed(None, "text")
    for index, line in enumerate(lines):
        holder = _innermost(placed, centre(line.box))
        (holder or loose).lines.append(index)
    if loose.lines:
        placed.append(loose)
    ordered: list[Line] = []
    blocks: list[Block] = []
    for part in placed:
        members = _in_order(part, lines)
        first = len(ordered)
        ordered += [lines[index] for index in members]
        own = ordered[first:]
        kind = block_type(part.region.label, own) if part.region else "text"
        blocks.append(
            Block(
                type=kind,
                box=part.region.box if part.region else hull([line.box for line in own]),
                text=None if kind == "table" else _text(part.region, own),
                html=part.region.html if part.region and kind == "table" else None,
                lines=list(range(first, len(ordered))),
                label=part.region.label if part.region else None,
                cells=part.cells,
            )
        )
    return LaidOut(lines=ordered, blocks=blocks, markdown=page_markdown(blocks))


def page_markdown(blocks: Sequence[Block]) -> str:
    """Headings, paragraphs and Markdown tables, in reading order; figures, headers and footers
    left out (as PP-StructureV3 leaves them out of its Markdown)."""
    parts: list[str] = []
    for block in blocks:
        if block.type in _NOT_IN_MARKDOWN:
            continue
        if block.type == "table":
            table = markdown_table(block.cells) if block.cells else (block.html or "")
            if table:
                parts.append(table)
            continue
        text = (block.text or "").strip()
        if not text:
            continue
        if block.type == "title":
            level = "#" if block.label == "doc_title" else "##"
            parts.append(f"{level} {' '.join(text.split())}")
        elif block.type == "formula":
            parts.append(f"$$\n{text}\n$$")
        else:
            parts.append(text)
    return "\n\n".join(parts)


def _cells(region: Region) -> list[TableCell]:
    if region.label != "table" or not region.html:
        return []
    return cells_of_html(region.html, region.cell_boxes)


def _innermost(placed: Sequence[_Placed], point: Point) -> _Placed | None:
    holders = [part for part in placed if part.region and contains(part.region.box, point)]
    return min(
        holders,
        key=lambda part: area(bounds(part.region.box)) if part.region else 0.0,
        default=None,
    )


def _rows(indices: Sequence[int], lines: Sequence[Line]) -> list[int]:
    """Lines top to bottom, those side by side on one row left to right."""
    rows: list[list[int]] = []
    for index in sorted(indices, key=lambda i: centre(lines[i].box)[1]):
        _, y0, _, y1 = bounds(lines[index].box)
        if rows:
            _, r0, _, r1 = bounds(lines[rows[-1][0]].box)
            if abs((y0 + y1) / 2 - (r0 + r1) / 2) <= 0.5 * min(y1 - y0, r1 - r0):
                rows[-1].append(index)
                continue
        rows.append([index])
    return [index for row in rows for index in sorted(row, key=lambda i: bounds(lines[i].box)[0])]


def _in_order(part: _Placed, lines: Sequence[Line]) -> list[int]:
    """A region's lines in reading order; a table's cell by cell, row by row, then any line
    that no cell holds."""
    if not part.cells:
        return _rows(part.lines, lines)
    by_cell: dict[int, list[int]] = {}
    rest: list[int] = []
    for index in part.lines:
        point = centre(lines[index].box)
        cell = next(
            (
                n
                for n, cell in enumerate(part.cells)
                if cell.box is not None and contains(cell.box, point)
            ),
            None,
        )
        if cell is None:
            rest.append(index)
        else:
            by_cell.setdefault(cell, []).append(index)
    ordered = [index for n in sorted(by_cell) for index in _rows(by_cell[n], lines)]
    return ordered + _rows(rest, lines)


def _text(region: Region | None, own: Sequence[Line]) -> str | None:
    """A region's text: its lines joined as running text; the pipeline's own text of it where
    it read no lines (a recognized formula)."""
    if own:
        return paragraph_text([line.text for line in own])
    if region is not None and region.text and region.text.strip():
        return region.text.strip()
    return None


def paragraph_text(lines: Sequence[str]) -> str:
    """Lines of one region as running text: joined by a space, a word hyphenated across a line
    break joined again ("reve-" + "lations"), and no space between two CJK characters."""
    text = ""
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if not text:
            text = line
        elif _HYPHENATED.search(text) and line[:1].islower():
            text = text[:-1] + line
        elif _cjk(text[-1]) and _cjk(line[0]):
            text += line
        else:
            text += " " + line
    return text


def _cjk(character: str) -> bool:
    return "\u3040" <= character <= "\u30ff" or "\u3400" <= character <= "\u9fff"
