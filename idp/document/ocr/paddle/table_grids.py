"""Tables found and cut into cells by their lines and their text's alignment, where PP-StructureV3
has only its offline substitutes.

Offline, the CDLA layout model that stands in for PP-DocLayout finds few tables it was not
trained on: it calls a grid of ruled cells a figure, folds a LaTeX table into the paragraph
around it, or covers half a page with one figure. And with no wired-table models, every table
went to SLANet_plus, which reads a damaged scan of a ruled or booktabs table as a few rows.
img2table (MIT, PyPI) finds tables in an image with OpenCV, with no model: their ruling lines,
and the columns of aligned text between them. This module asks it for boxes and cells only (no
OCR, no text) in two places:

- `find` + `place` (called by the layout substitute): the tables ruling lines show on the page
  become table regions. Two kinds are taken: bordered (img2table's: cells enclosed by horizontal
  and vertical lines), and booktabs (three horizontal rules of one span: above the header, under
  it and below the table); not img2table's borderless ones (docs/thresholds.md#table-grids).
- `cells` (called by the table stage's stand-ins in idp.document.ocr.paddle.structure): a table
  region's grid: its ruling lines' cells where they make one of 3 rows or more; where the rules
  make fewer (a box with a rule under the header), the rows and columns its text's alignment
  implies inside them; where it has no grid of lines, its aligned text's. PaddleX's own
  trans_cells_det_results_to_html builds the table from those cells, and puts the page's text
  into them. A region with no grid found goes to SLANet_plus, as before.

These are the offline substitute's own steps, not PaddleX's: with PP-DocLayout and the table
models in the model cache nothing here runs. How they were set: docs/thresholds.md#table-grids.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from idp.contract.quads import area, overlap

if TYPE_CHECKING:
    import numpy.typing as npt

Box = tuple[float, float, float, float]  # left, top, right, bottom in the image's pixels

# How these were set: docs/thresholds.md#table-grids
_HEADER_LINES: Final = 3  # a booktabs header: at most this many text lines between its rules
_BODY_LINES: Final = 40  # a booktabs body: at most this many
_EVEN: Final = 1.5  # a booktabs body is deeper than this many headers: evenly spaced rules are not
# A booktabs rule is at least this many characters long: shorter strokes are underlines and
# the marks of a photographed page.
_MIN_RULE_CHARS: Final = 20
_MIN_GRID_ROWS: Final = 3  # a ruled grid of fewer rows is read by its text's alignment inside
_GRID_SHARE: Final = 0.5  # a region's grid covers at least this share of it
# A region that holds this share of a found table's area around it is cut around the table.
_HOLDS: Final = 0.5
_INSIDE: Final = 0.5  # a region this much inside a found table is the table's own
_MIN_PART_PX: Final = 24  # a part of a cut region lower than this is dropped
_MATCH_IOU: Final = 0.5  # a layout table this close to a found one is the same table
_PAD: Final = 0.5  # the margin added around a found table, in text lines
# Found tables take this score: above PP-StructureV3's table threshold (0.5), below the layout
# model's confident regions.
FOUND_SCORE: Final = 0.9


@dataclass(frozen=True)
class FoundTable:
    box: Box
    kind: str  # "bordered" or "booktabs"


def _extractor(image: npt.NDArray[np.uint8]) -> Any:
    """img2table's extractor over an image (grey or colour); None where it finds no text-like
    ink to measure."""
    import cv2
    from img2table.tables.extractor import TableExtractor

    colour = image if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    extractor = TableExtractor(img=np.ascontiguousarray(colour))
    return extractor if extractor.characteristics is not None else None


def find(grey: npt.NDArray[np.uint8]) -> list[FoundTable]:
    """The tables ruling lines show on a greyscale page: img2table's bordered tables, and
    booktabs tables (`_booktabs`) that overlap none of them."""
    extractor = _extractor(grey)
    if extractor is None:
        return []
    extractor.extract_bordered_tables()
    reach = float(extractor.characteristics.median_line_sep)
    height, width = grey.shape

    def padded(box: Box) -> Box:
        # A margin around the outer rules, as a layout model's box has.
        x1, y1, x2, y2 = box
        pad = _PAD * reach
        return (max(x1 - pad, 0), max(y1 - pad, 0), min(x2 + pad, width), min(y2 + pad, height))

    found = [FoundTable(padded(_box(table)), "bordered") for table in extractor.tables]
    rules = sorted(
        (
            (float(line.x1), float(line.y1), float(line.x2))
            for line in extractor.lines
            if line.horizontal
        ),
        key=lambda rule: rule[1],
    )
    wide = _MIN_RULE_CHARS * float(extractor.characteristics.char_length)
    uprights = [
        (float(line.x1), float(line.y1), float(line.y2))
        for line in extractor.lines
        if line.vertical
    ]
    for box in _booktabs([rule for rule in rules if rule[2] - rule[0] >= wide], reach, uprights):
        if not any(overlap(box, table.box) > 0 for table in found):
            found.append(FoundTable(padded(box), "booktabs"))
    return found


def _booktabs(
    rules: list[tuple[float, float, float]],
    line: float,
    uprights: list[tuple[float, float, float]],
) -> list[Box]:
    """Booktabs tables from a page's horizontal rules (x1, y, x2), top to bottom: three rules
    of one span (ends within a text line of each other), the first two at most _HEADER_LINES
    text lines apart (the rule above the header and the one under it), the third the next rule
    of that span, at most _BODY_LINES lines further (the rule below). Not a table: rules as
    evenly spaced as lines of ruled paper, a form's fill-in lines or a chart's grid (the body no
    deeper than 1.5 headers), and a box (vertical lines, `uprights` (x, y1, y2), join the rules'
    two ends). A rule inside the body (a midrule between groups of rows) ends the table there:
    the rules alone do not tell it from the top of the next table."""

    def boxed(x1: float, top: float, x2: float, bottom: float) -> bool:
        def side(x: float) -> bool:
            return any(
                abs(ux - x) <= line and uy1 <= top + line and uy2 >= bottom - line
                for ux, uy1, uy2 in uprights
            )

        return side(x1) and side(x2)

    def same_span(a: tuple[float, float, float], b: tuple[float, float, float]) -> bool:
        return abs(a[0] - b[0]) <= line and abs(a[2] - b[2]) <= line

    tables: list[Box] = []
    used: set[int] = set()
    for i, top in enumerate(rules):
        if i in used:
            continue
        below = [j for j in range(i + 1, len(rules)) if same_span(top, rules[j])]
        if len(below) < 2:
            continue
        header, bottom = below[0], below[1]
        head, body = rules[header][1] - top[1], rules[bottom][1] - rules[header][1]
        x1, x2 = min(top[0], rules[bottom][0]), max(top[2], rules[bottom][2])
        if (
            head <= _HEADER_LINES * line
            and _EVEN * head < body <= _BODY_LINES * line
            and not boxed(x1, top[1], x2, rules[bottom][1])
        ):
            used.update((i, header, bottom))
            tables.append((x1, top[1], x2, rules[bottom][1]))
    return tables


def place(
    rows: npt.NDArray[np.float32], tables: list[FoundTable], *, table_label: int
) -> npt.NDArray[np.float32]:
    """The layout's rows [class, score, x1, y1, x2, y2] with the found tables in them:
    - a layout table that is the same table (IoU ≥ 0.5), however low its score, takes the found
      table's box and at least its score;
    - any other found table becomes a table region;
    - regions mostly inside a found table are dropped (its cells are the table's);
    - a region that holds a found table (a figure over half a page) is cut around it: its parts
      above and below the table stay, with the region's label."""
    kept: list[list[float]] = [list(map(float, row)) for row in rows]
    for table in tables:
        same = max(
            (row for row in kept if int(row[0]) == table_label),
            key=lambda row: _iou(_row_box(row), table.box),
            default=None,
        )
        if same is not None and _iou(_row_box(same), table.box) >= _MATCH_IOU:
            same[1:] = [max(same[1], FOUND_SCORE), *table.box]
            placed = same
        else:
            placed = [float(table_label), FOUND_SCORE, *table.box]
            kept.append(placed)
        kept = [row for row in kept if row is placed or not _inside(row, table.box)]
        kept = [part for row in kept for part in _cut(row, table.box, placed)]
    return np.asarray(kept, dtype=np.float32).reshape(-1, 6)


_CELLS_CACHE: OrderedDict[bytes, list[Box]] = OrderedDict()
_CELLS_CACHE_SIZE: Final = 4


def cells(image: npt.NDArray[np.uint8]) -> list[Box]:
    """A table region's cells (crop pixels), each once (a merged cell is one box over the slots
    it spans), top to bottom; [] where no grid covers at least half the region. The table
    stage asks twice for each region (which path, then its cells): the last few are kept."""
    if image.size == 0:
        return []
    key = hashlib.blake2b(image.tobytes(), digest_size=16).digest() + repr(image.shape).encode()
    found = _CELLS_CACHE.get(key)
    if found is None:
        found = _grid_cells(image)
        _CELLS_CACHE[key] = found
        while len(_CELLS_CACHE) > _CELLS_CACHE_SIZE:
            _CELLS_CACHE.popitem(last=False)
    return found


def _grid_cells(image: npt.NDArray[np.uint8]) -> list[Box]:
    size = float(image.shape[0] * image.shape[1])

    def covering(tables: list[Any]) -> Any:
        table = max(tables, key=lambda t: area(_box(t)), default=None)
        return table if table is not None and area(_box(table)) >= _GRID_SHARE * size else None

    extractor = _extractor(image)
    if extractor is None:
        return []
    extractor.extract_bordered_tables()
    grid = covering(extractor.tables)
    if grid is not None and grid.nb_rows < _MIN_GRID_ROWS:
        # Rules make a box with a rule under its header: the rows and columns inside are the
        # text's.
        extractor = _extractor(image)
        extractor.extract_bordered_tables(implicit_rows=True, implicit_columns=True)
        grid = covering(extractor.tables)
    if grid is None:
        extractor = _extractor(image)
        extractor.extract_tables(borderless_tables=True)
        grid = covering(extractor.tables)
    return [] if grid is None else grid_boxes(grid)


def grid_boxes(grid: Any) -> list[Box]:
    """The img2table grid's cells, each once, top to bottom; a cell with no area (a slot
    between two rules drawn side by side) is none: PaddleX's cell matching divides by it."""
    unique = {
        (cell.x1, cell.y1, cell.x2, cell.y2)
        for row in grid.rows
        for cell in row.cells
        if cell.x2 > cell.x1 and cell.y2 > cell.y1
    }
    return [
        (float(x1), float(y1), float(x2), float(y2))
        for x1, y1, x2, y2 in sorted(unique, key=lambda c: (c[1], c[0]))
    ]


def _box(table: Any) -> Box:
    return (float(table.x1), float(table.y1), float(table.x2), float(table.y2))


def _row_box(row: list[float]) -> Box:
    return (row[2], row[3], row[4], row[5])


def _iou(a: Box, b: Box) -> float:
    inter = overlap(a, b)
    return inter / (area(a) + area(b) - inter + 1e-6)


def _inside(row: list[float], box: Box) -> bool:
    size = area(_row_box(row))
    return size > 0 and overlap(_row_box(row), box) >= _INSIDE * size


def _cut(row: list[float], box: Box, placed: list[float]) -> list[list[float]]:
    """The row itself, or, where it holds the table, its parts above and below the table."""
    if row is placed or overlap(_row_box(row), box) < _HOLDS * area(box):
        return [row]
    label, score, x1, y1, x2, y2 = row
    parts = [(y1, box[1]), (box[3], y2)]
    return [
        [label, score, x1, top, x2, bottom] for top, bottom in parts if bottom - top >= _MIN_PART_PX
    ]
