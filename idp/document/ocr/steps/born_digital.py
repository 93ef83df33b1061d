"""A born-digital page read by a layout engine from what its PDF holds: the layout from the
rendered page, the text from the text layer, the tables from the layer's words and ruling lines.

The engine's layout model finds the regions; the tables the page's rulings draw
(text_layer.table_regions) and the unruled columns of values its words stand in
(text_layer.table_alignment) are added where it missed them, and the regions they cover give
way. Each region takes the layer's words that lie in it: a table's make its grid and fill its
cells (text_layer.tables), any other's make its lines. A region the layer holds no word of (a
figure's labels drawn as pixels, a scanned insert) is read by the engine's own OCR, and only
that. Each block says where its text came from (Block.text_source); the page's stages say what
ran. A table whose cells, read again from the pixels, say otherwise than the layer is doubted.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from idp.contract.quads import area, bounds, centre, contains, hull
from idp.contract.results import Block, Line, Quad, ReviewReason, Stage, TextSource, Word
from idp.document.decode import PageImage
from idp.document.ocr.engine import LayoutEngine, PageContent
from idp.document.ocr.steps.aligned_tables import NOT_SOUGHT, WITHIN_TABLE, share_inside
from idp.document.ocr.steps.regions import LABEL_TYPES, Region, lay_out
from idp.document.ocr.steps.tables import cells_of_html, html_table
from idp.document.text_layer.extract import LayerLine, LayerWord
from idp.document.text_layer.page import PageLayer
from idp.document.text_layer.table_alignment import aligned_tables
from idp.document.text_layer.table_regions import ruled_tables
from idp.document.text_layer.tables import Box, read_table, text_lines

TEXT_STAGE: Final = Stage(name="text", model=None, note="the PDF's text layer")
TABLE_STAGE: Final = Stage(
    name="table", model=None, note="the PDF's words and ruling lines (text_layer.tables)"
)
_TABLE_LABELS: Final = frozenset({"table"})
# A table region holding this many of the page's other drawings (curves, slanted lines) is a
# chart's: docs/thresholds.md#text-layer-tables.
_CHART_DRAWINGS: Final = 3
# How many of a table's cells are read again from its pixels, and how alike the two readings of
# a cell must be (difflib's ratio, letters and digits only) to agree.
CHECKED_CELLS: Final = 3
SAME_TEXT: Final = 0.5


@dataclass(frozen=True)
class _Read:
    order: int  # the region's place in the layout's reading order
    region: Region
    lines: list[Line]
    source: TextSource
    doubts: tuple[ReviewReason, ...] = ()


def read_born_digital(image: PageImage, layer: PageLayer, engine: LayoutEngine) -> PageContent:
    """The page's blocks and lines, its text from the layer (module docstring)."""
    found = engine.detect_layout(image)
    regions = [(r.label, r.box) for r in found]
    regions = reading_order(_with_ruled_tables(regions, layer, image.width))
    words = layer.words
    reads: list[_Read] = []
    ocr_used = False
    claimed: set[int] = set()
    for order, found_label, box in _innermost_first(regions):
        inside = [i for i, w in enumerate(words) if _inside(box, w.box)]
        own = [i for i in inside if i not in claimed]
        claimed.update(own)
        label = found_label
        if label in _TABLE_LABELS and _drawn_in(box, layer) >= _CHART_DRAWINGS:
            label = "chart"  # a plot's gridlines and labels, drawn among curves: no table
        if label in _TABLE_LABELS and own:
            reads += _table_reads(order, box, [words[i] for i in own], layer)
        elif own:
            lines = _lines_of(layer.layer.lines, {id(words[i]) for i in own})
            reads.append(_Read(order, Region(label=label, box=box), lines, "text_layer"))
        elif inside:  # a region over another's words, read once, there: no block of its own
            continue
        else:
            lines = engine.read_region(image, box)
            ocr_used = ocr_used or bool(lines)
            reads.append(_Read(order, Region(label=label, box=box), lines, "ocr"))
    loose = _lines_of(layer.layer.lines, {id(w) for i, w in enumerate(words) if i not in claimed})
    ordered = sorted(reads, key=lambda read: read.order)
    tables = [read.region for read in ordered if read.region.label in _TABLE_LABELS]
    mismatched = any(_layer_disagrees(image, region, engine) for region in tables)
    lines = [line for read in ordered for line in read.lines] + loose
    sources = {id(line): read.source for read in ordered for line in read.lines}
    laid = lay_out([read.region for read in ordered], lines)
    blocks = [_sourced(block, laid.lines, sources) for block in laid.blocks]
    stages = [*engine.layout_stages, TEXT_STAGE, TABLE_STAGE]
    checked = "a few table cells, read again to check the layer" if tables else None
    note = "; ".join(n for n in ("regions with no text" if ocr_used else None, checked) if n)
    if note:
        stages.append(Stage(name="ocr", model=engine.region_text_model, note=note))
    return PageContent(
        lines=laid.lines,
        blocks=blocks,
        markdown=laid.markdown or None,
        layout_regions=len(found),
        stages=stages,
        read_from_layer=True,
        doubts=[
            *([ReviewReason.TABLE_LAYER_MISMATCH] if mismatched else []),
            *dict.fromkeys(doubt for read in ordered for doubt in read.doubts),
        ],
    )


def _with_ruled_tables(
    regions: list[tuple[str, Quad]], layer: PageLayer, width: int
) -> list[tuple[str, Quad]]:
    """The layout's regions with the tables the rulings draw: a found table no layout table
    overlaps is added, and the regions lying in a table are dropped."""
    tables = ruled_tables(layer.rulings, layer.words, width)
    kept = list(regions)
    for table in tables:
        quad = _quad(table)
        if any(
            (label in _TABLE_LABELS and share_inside(bounds(box), table) > 0.5)
            or (label in _TABLE_LABELS and share_inside(table, bounds(box)) > 0.5)
            for label, box in kept
        ):
            continue
        kept.append(("table", quad))
    taken = [bounds(box) for label, box in kept if LABEL_TYPES.get(label) in NOT_SOUGHT]
    kept += [("table", _quad(table)) for table in aligned_tables(layer.words, taken)]
    return _without_regions_in_tables(kept)


def _without_regions_in_tables(regions: list[tuple[str, Quad]]) -> list[tuple[str, Quad]]:
    """The regions less those lying in a table (a header cell the layout calls a title): the
    table takes their words, and leaves out what is none of its cells as text after it."""
    tables = [bounds(box) for label, box in regions if label in _TABLE_LABELS]
    return [
        (label, box)
        for label, box in regions
        if label in _TABLE_LABELS
        or all(share_inside(bounds(box), table) < WITHIN_TABLE for table in tables)
    ]


def reading_order(regions: Sequence[tuple[str, Quad]]) -> list[tuple[str, Quad]]:
    """The regions as a person reads them: headers first, footers last, the rest by recursive
    XY-cut (a gap across the page reads top to bottom, a gutter down it left to right)."""
    head = [r for r in regions if LABEL_TYPES.get(r[0]) == "header"]
    foot = [r for r in regions if LABEL_TYPES.get(r[0]) == "footer"]
    body = [r for r in regions if r not in head and r not in foot]
    return [*_xy_cut(head), *_xy_cut(body), *_xy_cut(foot)]


def _by_top(regions: Sequence[tuple[str, Quad]]) -> list[tuple[str, Quad]]:
    return sorted(regions, key=lambda r: (bounds(r[1])[1], bounds(r[1])[0]))


def _xy_cut(regions: Sequence[tuple[str, Quad]]) -> list[tuple[str, Quad]]:
    if len(regions) <= 1:
        return list(regions)
    for axis in (1, 0):  # rows across the page first, then columns
        parts = _cut(regions, axis)
        if len(parts) > 1:
            return [region for part in parts for region in _xy_cut(part)]
    return _by_top(regions)


def _cut(regions: Sequence[tuple[str, Quad]], axis: int) -> list[list[tuple[str, Quad]]]:
    """The regions in groups that a gap along `axis` (1: y, 0: x) parts, in order."""
    spans = sorted(regions, key=lambda r: bounds(r[1])[axis])
    groups: list[list[tuple[str, Quad]]] = []
    reach = float("-inf")
    for region in spans:
        box = bounds(region[1])
        if not groups or box[axis] >= reach:
            groups.append([region])
        else:
            groups[-1].append(region)
        reach = max(reach, box[axis + 2])
    return groups


def _innermost_first(regions: Sequence[tuple[str, Quad]]) -> list[tuple[int, str, Quad]]:
    """Each region with its place in reading order, smaller regions first: they claim their
    words before the regions around them."""
    numbered = [(order, label, box) for order, (label, box) in enumerate(regions)]
    return sorted(numbered, key=lambda region: area(bounds(region[2])))


def _table_reads(order: int, box: Quad, words: list[LayerWord], layer: PageLayer) -> list[_Read]:
    """The table region's read: its table, and the region's words it left out (a caption, the
    code above it) as text after it."""
    table = read_table(bounds(box), words, layer.rulings)
    if table is None:  # cannot be: the region holds words
        return [_Read(order, Region(label="table", box=box), [], "text_layer")]
    cells = table.cells
    held = {id(word) for word in table.words}
    lines = [
        _line(members)
        for cell in cells
        if cell.box is not None
        for members in _cell_lines([w for w in words if id(w) in held], cell.box)
    ]
    region = Region(
        label="table",
        box=hull([cell.box for cell in cells if cell.box is not None]) if cells else box,
        html=html_table(cells),
        cell_boxes=[cell.box for cell in cells],
    )
    doubts = (ReviewReason.TABLE_ROWS_SPLIT,) if table.rows_unlike_rulings else ()
    reads = [_Read(order, region, lines, "text_layer", doubts)]
    rest = [word for word in words if id(word) not in held]
    if rest:
        text = _lines_of(layer.layer.lines, {id(word) for word in rest})
        region = Region(label="text", box=hull([line.box for line in text]))
        reads.append(_Read(order, region, text, "text_layer"))
    return reads


def _cell_lines(words: list[LayerWord], box: Quad) -> list[list[LayerWord]]:
    inside = [word for word in words if contains(box, centre(_quad(word.box)))]
    by_id = {id(word): word for word in inside}
    return [[by_id[id(word)] for word in line.words] for line in text_lines(inside)]


def _lines_of(lines: Sequence[LayerLine], chosen: set[int]) -> list[Line]:
    """The layer's lines, each cut to its chosen words (a line across two regions gives each
    its own part)."""
    parts = []
    for line in lines:
        words = [word for word in line.words if id(word) in chosen]
        if words:
            parts.append(_line(words))
    return parts


def _line(words: Sequence[LayerWord]) -> Line:
    return Line(
        text=" ".join(word.text for word in words),
        box=hull([_quad(word.box) for word in words]),
        confidence=1.0,
        words=[Word(text=word.text, box=_quad(word.box), confidence=1.0) for word in words],
    )


def _sourced(block: Block, lines: Sequence[Line], sources: dict[int, TextSource]) -> Block:
    found = {sources.get(id(lines[index]), "text_layer") for index in block.lines}
    source: TextSource | None = None
    if found:
        source = found.pop() if len(found) == 1 else "mixed"
    return block.model_copy(update={"text_source": source})


def _layer_disagrees(image: PageImage, region: Region, engine: LayoutEngine) -> bool:
    """Whether the table's fullest cells (CHECKED_CELLS), read again from the page's pixels, say
    something else than the layer gives them, most of them: glyphs the layer maps wrong."""
    boxed = [
        (cell.text, cell.box)
        for cell in cells_of_html(region.html or "", region.cell_boxes)
        if cell.box is not None and len(_plain(cell.text)) >= 2
    ]
    fullest = sorted(boxed, key=lambda cell: len(cell[0]), reverse=True)[:CHECKED_CELLS]
    if not fullest:
        return False
    differing = 0
    for text, box in fullest:
        read = " ".join(line.text for line in engine.read_region(image, box))
        similar = difflib.SequenceMatcher(None, _plain(text), _plain(read)).ratio()
        differing += similar < SAME_TEXT
    return differing * 2 > len(fullest)


def _plain(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _drawn_in(box: Quad, layer: PageLayer) -> int:
    """How many of the page's drawings (curves, slanted lines) lie in the box."""
    return sum(
        contains(box, ((left + right) / 2, (top + bottom) / 2))
        for left, top, right, bottom in layer.drawings
    )


def _quad(box: Box) -> Quad:
    left, top, right, bottom = box
    return ((left, top), (right, top), (right, bottom), (left, bottom))


def _inside(box: Quad, word: Box) -> bool:
    return contains(box, ((word[0] + word[2]) / 2, (word[1] + word[3]) / 2))
