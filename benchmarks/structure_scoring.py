"""How benchmarks/structure.py scores a page: tables against the page's truth tables (TEDS,
TEDS-struct, cell-adjacency F1) and the page's text against its reading-order text (CER).

Tables are compared as grids: rows of cell texts, None in a slot that a merged cell covers
(the grid pdfplumber gives, and grid_of_html's). Every HTML table, predicted or true, is first
rebuilt from its grid (html_of_grid) so that only cells, spans and texts are compared, never
how an engine writes its HTML (<th>, <thead>, attributes, inline tags, whitespace).
Pure functions; nothing here reads a file or runs an engine.
"""

from __future__ import annotations

import html as html_escape
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Final, Literal

Box = tuple[float, float, float, float]  # left, top, right, bottom, in one image's pixels
Grid = list[list[str | None]]  # rows of cell texts; None: a slot a merged cell covers
Direction = Literal["right", "below"]
Relation = tuple[str, str, Direction]

# Predicted and true tables are paired when their boxes overlap this much (IoU), and
# otherwise, where a prediction has no box or overlaps no table left, when its content TEDS
# with a true table left reaches MIN_FALLBACK_TEDS. Both set before any page was scored; on
# the corpus's tuning pages every true table meets its prediction at an IoU above 0.95.
MIN_IOU: Final = 0.3
MIN_FALLBACK_TEDS: Final = 0.5
_DOT_LEADERS = re.compile(r"(?:\s?\.){4,}")


def normal_text(text: str, *, ignore_case: bool = False) -> str:
    """A cell's or a page's text with whitespace runs as one space (and lower case)."""
    text = " ".join(text.split())
    return text.lower() if ignore_case else text


# ------------------------------------------------------------------------- grids and HTML
@dataclass(frozen=True)
class Cell:
    """A cell of a grid where it starts, and the rows and columns it spans."""

    row: int
    column: int
    rowspan: int
    colspan: int
    text: str


def width_of(grid: Sequence[Sequence[str | None]]) -> int:
    return max((len(row) for row in grid), default=0)


def cells_of_grid(grid: Sequence[Sequence[str | None]]) -> list[Cell]:
    """The grid's cells, spans read off its None slots: a cell spans the None slots to its
    right in its row, then the rows below in which all those columns are None too. A None
    slot that no cell claims (nothing above or to its left spans it) is an empty cell. Rows
    shorter than the widest are padded with empty cells."""
    height, width = len(grid), width_of(grid)
    slots = [[*row, *[""] * (width - len(row))] for row in grid]
    claimed = [[False] * width for _ in range(height)]
    cells: list[Cell] = []
    for r in range(height):
        for c in range(width):
            if claimed[r][c]:
                continue
            colspan = 1
            if slots[r][c] is not None:
                while (
                    c + colspan < width
                    and slots[r][c + colspan] is None
                    and not claimed[r][c + colspan]
                ):
                    colspan += 1
            rowspan = 1
            if slots[r][c] is not None:
                while r + rowspan < height and all(
                    slots[r + rowspan][k] is None and not claimed[r + rowspan][k]
                    for k in range(c, c + colspan)
                ):
                    rowspan += 1
            for rr in range(r, r + rowspan):
                for cc in range(c, c + colspan):
                    claimed[rr][cc] = True
            cells.append(Cell(r, c, rowspan, colspan, normal_text(slots[r][c] or "")))
    return cells


def html_of_grid(grid: Sequence[Sequence[str | None]]) -> str:
    """The grid as a plain HTML table: <table>, <tr>, <td> with rowspan and colspan where a
    cell spans, texts escaped. (PubTabNet's TEDS reads <td> only.)"""
    rows: list[list[str]] = [[] for _ in grid]
    for cell in cells_of_grid(grid):
        spans = "".join(
            f' {name}="{count}"'
            for name, count in (("rowspan", cell.rowspan), ("colspan", cell.colspan))
            if count > 1
        )
        rows[cell.row].append(f"<td{spans}>{html_escape.escape(cell.text, quote=False)}</td>")
    return "<table>" + "".join(f"<tr>{''.join(row)}</tr>" for row in rows) + "</table>"


class _GridParser(HTMLParser):
    """The first table of an HTML document as a full grid; spans leave None in the slots
    they cover. A table nested in a cell is read as that cell's text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[dict[int, str | None]] = []  # slots by column; spans run ahead
        self.opened = 0  # rows begun by a <tr> (or by a cell before any)
        self._depth = 0  # tables open
        self._done = False
        self._cell: list[str] | None = None
        self._span = (1, 1)
        self._column = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._done:
            return
        if tag == "table":
            self._depth += 1
        elif self._depth != 1:
            return
        elif tag == "tr":
            self._close_cell()
            self.opened += 1
            self._row(self.opened - 1)
            self._column = 0
        elif tag in ("td", "th"):
            self._close_cell()  # an unclosed cell ends where the next begins
            if not self.opened:
                self.opened = 1
                self._row(0)
            values = dict(attrs)
            self._span = (_span(values.get("rowspan")), _span(values.get("colspan")))
            self._cell = []
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if self._done:
            return
        if tag == "table":
            self._depth -= 1
            self._done = self._depth == 0
            if self._done:
                self._close_cell()
        elif self._depth == 1 and tag in ("td", "th"):
            self._close_cell()

    def handle_data(self, data: str) -> None:
        if self._cell is not None and not self._done:
            self._cell.append(data)

    def _row(self, index: int) -> dict[int, str | None]:
        while len(self.rows) <= index:
            self.rows.append({})
        return self.rows[index]

    def _close_cell(self) -> None:
        if self._cell is None:
            return
        row = self.opened - 1
        slots = self.rows[row]
        while self._column in slots:  # taken by a rowspan from above
            self._column += 1
        rowspan, colspan = self._span
        for r in range(row, row + rowspan):
            covered = self._row(r)
            for c in range(self._column, self._column + colspan):
                covered.setdefault(c, None)
        slots[self._column] = normal_text("".join(self._cell))
        self._column += colspan
        self._cell = None


def _span(value: str | None) -> int:
    try:
        return max(1, int(value or 1))
    except ValueError:
        return 1


def grid_of_html(html: str) -> Grid:
    """The first table of `html` as a full grid: every row as wide as the widest, a spanning
    cell's text in its first slot and None in the others it covers, missing cells empty.
    Rowspans past the last <tr> are cut there."""
    parser = _GridParser()
    parser.feed(html)
    parser.close()
    rows = parser.rows[: parser.opened]
    width = max((max(row) + 1 for row in rows if row), default=0)
    return [[row.get(c, "") for c in range(width)] for row in rows]


# --------------------------------------------------------------------------------- TEDS
def _pubtabnet_html(grid: Sequence[Sequence[str | None]]) -> str:
    return f"<html><body>{html_of_grid(grid)}</body></html>"


def teds(
    predicted: Sequence[Sequence[str | None]],
    truth: Sequence[Sequence[str | None]],
    *,
    structure_only: bool = False,
) -> float:
    """Tree-Edit-Distance-based Similarity (Zhong et al. 2020, PubTabNet), by PubTabNet's
    reference code as PyPI's table-recognition-metric ships it: 1 - APTED distance between the
    two tables' HTML trees / the larger tree's node count; renaming one <td> into another costs
    nothing where tag and spans agree and the normalised character edit distance of their
    texts otherwise (with `structure_only`, texts are not compared: TEDS-struct). Both tables
    are rebuilt by html_of_grid first. An empty table on either side scores 0."""
    from table_recognition_metric import TEDS  # type: ignore[import-untyped]

    if not predicted or not truth or not width_of(predicted) or not width_of(truth):
        return 0.0
    score = TEDS(structure_only=structure_only)(_pubtabnet_html(predicted), _pubtabnet_html(truth))
    # The reference code can return a little below 0 for two tables with almost nothing in
    # common (seen on a balance sheet read as another shape); TEDS is defined on [0, 1].
    return max(0.0, float(score))


def teds_of_html(predicted_html: str, truth_html: str, *, structure_only: bool = False) -> float:
    """teds() of two HTML tables."""
    return teds(
        grid_of_html(predicted_html), grid_of_html(truth_html), structure_only=structure_only
    )


# ----------------------------------------------------------------------- cell adjacency
def adjacency_relations(
    grid: Sequence[Sequence[str | None]], *, ignore_case: bool = False
) -> Counter[Relation]:
    """The table's adjacency relations, as the ICDAR 2013 table competition defines them
    (Göbel, Hassan, Oro and Orsi, 'ICDAR 2013 Table Competition'): every non-empty cell is
    related to its nearest non-empty neighbour to the right in the same row and to its
    nearest non-empty neighbour below in the same column, empty cells in between skipped. A
    relation is (text of the cell, text of the neighbour, direction), texts with whitespace
    normalised (and lower-cased with `ignore_case`), so that a relation is found again
    wherever the table lies and however its rows and columns are numbered. A spanning cell
    looks right from its first row and down from its first column; a neighbour found in a
    slot a span covers is that spanning cell. Repeated relations count as often as they
    occur (a multiset)."""
    cells = cells_of_grid(grid)
    height, width = len(grid), width_of(grid)
    owner: list[list[Cell | None]] = [[None] * width for _ in range(height)]
    for cell in cells:
        for r in range(cell.row, cell.row + cell.rowspan):
            for c in range(cell.column, cell.column + cell.colspan):
                owner[r][c] = cell
    relations: Counter[Relation] = Counter()
    for cell in cells:
        if not cell.text:
            continue
        text = normal_text(cell.text, ignore_case=ignore_case)
        lines: tuple[tuple[Direction, list[Cell | None]], ...] = (
            ("right", [owner[cell.row][c] for c in range(cell.column + cell.colspan, width)]),
            ("below", [owner[r][cell.column] for r in range(cell.row + cell.rowspan, height)]),
        )
        for direction, line in lines:
            neighbour = next((other for other in line if other is not None and other.text), None)
            if neighbour is not None:
                other = normal_text(neighbour.text, ignore_case=ignore_case)
                relations[(text, other, direction)] += 1
    return relations


@dataclass(frozen=True)
class AdjacencyScore:
    """Predicted adjacency relations against the true ones."""

    correct: int
    predicted: int
    truth: int

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else float(not self.truth)

    @property
    def recall(self) -> float:
        return self.correct / self.truth if self.truth else float(not self.predicted)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def __add__(self, other: AdjacencyScore) -> AdjacencyScore:
        return AdjacencyScore(
            self.correct + other.correct,
            self.predicted + other.predicted,
            self.truth + other.truth,
        )


def adjacency_score(
    predicted: Sequence[Sequence[str | None]],
    truth: Sequence[Sequence[str | None]],
    *,
    ignore_case: bool = False,
) -> AdjacencyScore:
    """Cell-adjacency precision, recall and F1 (ICDAR 2013): the relations both tables have
    (multiset intersection) over the predicted table's and over the true table's."""
    found = adjacency_relations(predicted, ignore_case=ignore_case)
    true = adjacency_relations(truth, ignore_case=ignore_case)
    return AdjacencyScore(
        correct=sum((found & true).values()),
        predicted=sum(found.values()),
        truth=sum(true.values()),
    )


# ------------------------------------------------------------------------ tables on a page
@dataclass(frozen=True)
class PageTable:
    """A table on a page, predicted or true: its grid and, where known, its box in the
    page image's pixels."""

    grid: Grid
    bbox: Box | None = None


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def match_tables(
    predicted: Sequence[PageTable],
    truth: Sequence[PageTable],
    *,
    min_iou: float = MIN_IOU,
    min_fallback_teds: float = MIN_FALLBACK_TEDS,
) -> list[tuple[int, int]]:
    """Pairs (predicted index, truth index), each table in one pair at most: first by box
    overlap, the largest IoU first (at least `min_iou`); then the tables left, by content
    TEDS, the largest first (at least `min_fallback_teds`): a prediction without a box, or
    whose box is off (a page read at another scale), still meets the table it reads."""
    by_iou = sorted(
        (
            (iou(p.bbox, t.bbox), i, j)
            for i, p in enumerate(predicted)
            for j, t in enumerate(truth)
            if p.bbox is not None and t.bbox is not None
        ),
        reverse=True,
    )
    pairs: list[tuple[int, int]] = []
    used_p: set[int] = set()
    used_t: set[int] = set()
    for overlap, i, j in by_iou:
        if overlap >= min_iou and i not in used_p and j not in used_t:
            pairs.append((i, j))
            used_p.add(i)
            used_t.add(j)
    by_teds = sorted(
        (
            (teds(p.grid, t.grid), i, j)
            for i, p in enumerate(predicted)
            if i not in used_p
            for j, t in enumerate(truth)
            if j not in used_t
        ),
        reverse=True,
    )
    for similarity, i, j in by_teds:
        if similarity >= min_fallback_teds and i not in used_p and j not in used_t:
            pairs.append((i, j))
            used_p.add(i)
            used_t.add(j)
    return sorted(pairs, key=lambda pair: pair[1])


@dataclass(frozen=True)
class TableScore:
    """One true table against the predicted table paired with it (None: none was)."""

    truth_index: int
    predicted_index: int | None
    iou: float | None  # None where either box is unknown or nothing was paired
    teds: float
    teds_struct: float
    adjacency: AdjacencyScore
    truth_shape: tuple[int, int]
    predicted_shape: tuple[int, int] | None


@dataclass(frozen=True)
class PageTablesScore:
    """Every table of a page: each true table's score (0 where none was found), the
    predicted tables left over, and relations pooled over the page."""

    tables: tuple[TableScore, ...]
    predicted: int  # tables the engine found
    extra: int  # found tables paired with no true table
    adjacency: AdjacencyScore  # pooled: extra tables' relations count as wrong

    @property
    def scored(self) -> bool:
        """Whether the page has true tables. On a page without (a form, a page of prose),
        whatever an engine calls a table is not counted for or against it: a form's boxes
        are a table to some readers and not to others, and no truth says which."""
        return bool(self.tables)

    @property
    def teds(self) -> float | None:
        return _mean([t.teds for t in self.tables]) if self.tables else None

    @property
    def teds_struct(self) -> float | None:
        return _mean([t.teds_struct for t in self.tables]) if self.tables else None

    @property
    def table_recall(self) -> float | None:
        if not self.tables:
            return None
        return sum(t.predicted_index is not None for t in self.tables) / len(self.tables)

    @property
    def table_precision(self) -> float | None:
        if not self.tables:
            return None
        matched = sum(t.predicted_index is not None for t in self.tables)
        return matched / self.predicted if self.predicted else 0.0


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _shape(grid: Sequence[Sequence[str | None]]) -> tuple[int, int]:
    return (len(grid), width_of(grid))


def score_page_tables(
    predicted: Sequence[PageTable],
    truth: Sequence[PageTable],
    *,
    ignore_case: bool = False,
    min_iou: float = MIN_IOU,
    min_fallback_teds: float = MIN_FALLBACK_TEDS,
) -> PageTablesScore:
    """Score a page's predicted tables against its true ones: pair them (match_tables), score
    each true table against its pair (TEDS, TEDS-struct, adjacency; a true table left unpaired
    scores 0 and its relations are all missed), and pool the page's adjacency relations, the
    relations of predicted tables left unpaired counting as wrong where the page has tables."""
    pairs = dict(
        (j, i)
        for i, j in match_tables(
            predicted, truth, min_iou=min_iou, min_fallback_teds=min_fallback_teds
        )
    )
    scores: list[TableScore] = []
    pooled = AdjacencyScore(0, 0, 0)
    for j, true in enumerate(truth):
        i = pairs.get(j)
        if i is None:
            missed = AdjacencyScore(0, 0, sum(adjacency_relations(true.grid).values()))
            scores.append(TableScore(j, None, None, 0.0, 0.0, missed, _shape(true.grid), None))
            pooled += missed
            continue
        found = predicted[i]
        overlap = (
            iou(found.bbox, true.bbox) if found.bbox is not None and true.bbox is not None else None
        )
        adjacency = adjacency_score(found.grid, true.grid, ignore_case=ignore_case)
        pooled += adjacency
        scores.append(
            TableScore(
                truth_index=j,
                predicted_index=i,
                iou=overlap,
                teds=teds(found.grid, true.grid),
                teds_struct=teds(found.grid, true.grid, structure_only=True),
                adjacency=adjacency,
                truth_shape=_shape(true.grid),
                predicted_shape=_shape(found.grid),
            )
        )
    paired = set(pairs.values())
    extra = [table for i, table in enumerate(predicted) if i not in paired]
    if truth:
        for table in extra:
            wrong = sum(adjacency_relations(table.grid, ignore_case=ignore_case).values())
            pooled += AdjacencyScore(0, wrong, 0)
    return PageTablesScore(tuple(scores), len(predicted), len(extra), pooled)


# ------------------------------------------------------------------------------ page text
def page_cer(reference: str, read: str, *, strip_leaders: bool = False) -> float:
    """Order-sensitive character error rate of a page's text: edit distance (rapidfuzz's
    Levenshtein, as devkit.textmetrics) over the reference's length, whitespace runs as one
    space on both sides; with `strip_leaders`, dot leaders are left out of both."""
    from devkit.textmetrics import character_error_rate

    if strip_leaders:
        reference, read = _DOT_LEADERS.sub(" ", reference), _DOT_LEADERS.sub(" ", read)
    return character_error_rate(reference, read)
