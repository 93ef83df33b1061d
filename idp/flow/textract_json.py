"""result.textract.json: a job's pages as an Amazon Textract response: DetectDocumentText's for
text-line models, AnalyzeDocument's (LAYOUT and TABLES) for layout models.

Tools that already read Textract's JSON (amazon-textract-textractor, amazon-textract-response-
parser, IDP accelerators that take `textractBlocks`) read a job's text, layout and tables
through it unchanged. Each page is a PAGE block whose children are its LINE blocks, in the
result's reading order; each line's children are its WORD blocks. A page a layout model read
adds, as the PAGE's children too, a LAYOUT_* block per region (its children: the region's
lines) and a TABLE block per table: the table's children are one CELL per place of its grid
(RowIndex, ColumnIndex, 1-based; a cell's children are the words that lie in it), and a cell
that spans several places is a MERGED_CELL whose children are those CELLs, as Textract writes
them. Geometry is Textract's: a BoundingBox and a 4-point Polygon as
shares of the page's width and height, on the page as uploaded (as result.json's boxes are).
Confidence is on Textract's 0-100 scale: a line's recognizer score, which its words share (the
recognizer scores a line, not its words).

Word boxes come from where they were measured (Line.words: the recognizer's character columns,
or the PDF's glyph boxes); a line without them (PP-StructureV3, PaddleOCR-VL) gets its words
placed by their share of the line's characters. Block ids are UUIDs derived from the job, page
and position, so a retried job writes the same file.

The document is written page by page (`TextractWriter`), so a chunked job's merge streams it
like its result.json.
"""

from __future__ import annotations

import json
import uuid
from typing import IO, Any, Final

from idp.contract.quads import centre, contains, is_vertical, quad_span
from idp.contract.results import Block, Line, PageResult, Quad, TableCell, Word

# A fixed namespace for the block ids (uuid5 of job id, page and position).
_ID_NAMESPACE: Final = uuid.UUID("0b5d7c1e-6f44-4a61-9d0e-7a0f3c2b9e15")
_WHOLE_PAGE: Final[Quad] = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0))
# Block type (and, for titles and page numbers, the layout model's label) → Textract's layout.
_LAYOUT: Final = {
    "title": "LAYOUT_SECTION_HEADER",
    "text": "LAYOUT_TEXT",
    "caption": "LAYOUT_TEXT",
    "formula": "LAYOUT_TEXT",
    "list": "LAYOUT_LIST",
    "table": "LAYOUT_TABLE",
    "figure": "LAYOUT_FIGURE",
    "header": "LAYOUT_HEADER",
    "footer": "LAYOUT_FOOTER",
}
_LAYOUT_BY_LABEL: Final = {"doc_title": "LAYOUT_TITLE", "number": "LAYOUT_PAGE_NUMBER"}


def geometry(quad: Quad, width: int, height: int) -> dict[str, Any]:
    """Textract's Geometry of a pixel quad on a `width` × `height` page."""
    points = [(min(max(x / width, 0.0), 1.0), min(max(y / height, 0.0), 1.0)) for x, y in quad]
    xs, ys = [x for x, _ in points], [y for _, y in points]
    return {
        "BoundingBox": {
            "Width": max(xs) - min(xs),
            "Height": max(ys) - min(ys),
            "Left": min(xs),
            "Top": min(ys),
        },
        "Polygon": [{"X": x, "Y": y} for x, y in points],
    }


def estimated_words(line: Line) -> list[Word]:
    """A line's words placed by their share of its characters, for an engine that gives no
    word positions."""
    text = line.text
    vertical = is_vertical(line.box)
    words: list[Word] = []
    position = 0
    for token in text.split():
        start = text.index(token, position)
        position = start + len(token)
        box = quad_span(line.box, start / len(text), position / len(text), vertical=vertical)
        words.append(Word(text=token, box=box))
    return words


def has_layout(page: PageResult) -> bool:
    """Whether a layout model read the page (its blocks carry the model's labels)."""
    return any(block.label is not None for block in page.blocks)


def page_blocks(page: PageResult, *, job_id: str) -> list[dict[str, Any]]:
    """One page's blocks, in Textract's order: the PAGE first, each LINE before its WORDs, then
    (for a layout model's page) its LAYOUT blocks and TABLEs, each before its parts."""

    def block_id(*position: object) -> str:
        return str(uuid.uuid5(_ID_NAMESPACE, "/".join(map(str, (job_id, page.page, *position)))))

    width, height = max(page.width, 1), max(page.height, 1)
    line_blocks: list[dict[str, Any]] = []
    words_of_line: list[list[tuple[dict[str, Any], Word]]] = []
    for index, line in enumerate(page.lines):
        confidence = round(line.confidence * 100.0, 4)
        words = [
            (
                {
                    "BlockType": "WORD",
                    "Confidence": (
                        confidence if word.confidence is None else round(word.confidence * 100, 4)
                    ),
                    "Text": word.text,
                    "TextType": "PRINTED",
                    "Geometry": geometry(word.box, width, height),
                    "Id": block_id("word", index, number),
                    "Page": page.page,
                },
                word,
            )
            for number, word in enumerate(line.words or estimated_words(line))
        ]
        words_of_line.append(words)
        line_blocks.append(
            {
                "BlockType": "LINE",
                "Confidence": confidence,
                "Text": line.text,
                "Geometry": geometry(line.box, width, height),
                "Id": block_id("line", index),
                "Relationships": [{"Type": "CHILD", "Ids": [word["Id"] for word, _ in words]}],
                "Page": page.page,
            }
        )
        line_blocks.extend(word for word, _ in words)
    line_ids = [block["Id"] for block in line_blocks if block["BlockType"] == "LINE"]
    structure: list[dict[str, Any]] = []
    if has_layout(page):
        layout = _Layout(page, width, height, block_id, line_ids, words_of_line)
        for number, block in enumerate(page.blocks):
            structure += layout.blocks_of(number, block)
    page_block = {
        "BlockType": "PAGE",
        "Geometry": geometry(_WHOLE_PAGE, 1, 1),
        "Id": block_id("page"),
        "Relationships": [
            {
                "Type": "CHILD",
                "Ids": line_ids + [b["Id"] for b in structure if b.pop("_on_page", False)],
            }
        ],
        "Page": page.page,
    }
    return [page_block, *line_blocks, *structure]


class _Layout:
    """A layout model's page as Textract's LAYOUT, TABLE, CELL and MERGED_CELL blocks."""

    def __init__(
        self,
        page: PageResult,
        width: int,
        height: int,
        block_id: Any,
        line_ids: list[str],
        words_of_line: list[list[tuple[dict[str, Any], Word]]],
    ) -> None:
        self.page, self.width, self.height = page, width, height
        self.block_id, self.line_ids, self.words_of_line = block_id, line_ids, words_of_line

    def _confidence(self, lines: list[int]) -> float:
        scores = [self.page.lines[index].confidence for index in lines]
        return round(100.0 * sum(scores) / len(scores), 4) if scores else 100.0

    def _block(self, kind: str, box: Quad, ids: list[str], *position: object) -> dict[str, Any]:
        block: dict[str, Any] = {
            "BlockType": kind,
            "Geometry": geometry(box, self.width, self.height),
            "Id": self.block_id(*position),
            "Page": self.page.page,
        }
        if ids:
            block["Relationships"] = [{"Type": "CHILD", "Ids": ids}]
        return block

    def blocks_of(self, number: int, block: Block) -> list[dict[str, Any]]:
        kind = _LAYOUT_BY_LABEL.get(block.label or "", _LAYOUT.get(block.type, "LAYOUT_TEXT"))
        confidence = self._confidence(block.lines)
        out: list[dict[str, Any]] = []
        if kind == "LAYOUT_LIST":
            items = []
            for line in block.lines:
                item = self._block(
                    "LAYOUT_TEXT", self.page.lines[line].box, [self.line_ids[line]], "item", line
                )
                item["Confidence"] = self._confidence([line])
                items.append(item)
            layout = self._block(kind, block.box, [item["Id"] for item in items], "layout", number)
            out += [layout, *items]
        else:
            ids = [self.line_ids[line] for line in block.lines]
            layout = self._block(kind, block.box, ids, "layout", number)
            out.append(layout)
        layout["Confidence"] = confidence
        layout["_on_page"] = True
        if block.type == "table" and block.cells:
            out += self._table(number, block, confidence)
        return out

    def _table(self, number: int, block: Block, confidence: float) -> list[dict[str, Any]]:
        rows = max(cell.row + cell.row_span - 1 for cell in block.cells)
        columns = max(cell.column + cell.column_span - 1 for cell in block.cells)
        owner: dict[tuple[int, int], TableCell] = {}
        for cell in block.cells:
            for r in range(cell.row, cell.row + cell.row_span):
                for c in range(cell.column, cell.column + cell.column_span):
                    owner.setdefault((r, c), cell)
        words = self._words_by_cell(block)
        grid: dict[tuple[int, int], dict[str, Any]] = {}
        for r in range(1, rows + 1):
            for c in range(1, columns + 1):
                place = owner.get((r, c))
                own = place is not None and (place.row, place.column) == (r, c)
                ids = [word["Id"] for word in words.get(id(place), [])] if own else []
                box = self._place_box(block, place, r, c, rows, columns)
                grid[(r, c)] = self._block("CELL", box, ids, "cell", number, r, c)
                grid[(r, c)].update(
                    RowIndex=r, ColumnIndex=c, RowSpan=1, ColumnSpan=1, Confidence=confidence
                )
        merged = []
        for cell in block.cells:
            if cell.row_span == 1 and cell.column_span == 1:
                continue
            places = [
                grid[(r, c)]["Id"]
                for r in range(cell.row, cell.row + cell.row_span)
                for c in range(cell.column, cell.column + cell.column_span)
            ]
            box = cell.box or _grid_box(block.box, cell, rows, columns)
            merged_block = self._block(
                "MERGED_CELL", box, places, "merged", number, cell.row, cell.column
            )
            merged_block.update(
                RowIndex=cell.row,
                ColumnIndex=cell.column,
                RowSpan=cell.row_span,
                ColumnSpan=cell.column_span,
                Confidence=confidence,
            )
            merged.append(merged_block)
        table = self._block("TABLE", block.box, [b["Id"] for b in grid.values()], "table", number)
        if merged:
            table["Relationships"].append({"Type": "MERGED_CELL", "Ids": [b["Id"] for b in merged]})
        table.update(Confidence=confidence, EntityTypes=["STRUCTURED_TABLE"], _on_page=True)
        return [table, *grid.values(), *merged]

    def _words_by_cell(self, block: Block) -> dict[int, list[dict[str, Any]]]:
        """Each cell's words: the words of the table's lines whose centre lies in the cell."""
        boxed = [cell for cell in block.cells if cell.box is not None]
        found: dict[int, list[dict[str, Any]]] = {}
        for line in block.lines:
            for word_block, word in self.words_of_line[line]:
                point = centre(word.box)
                cell = next((c for c in boxed if c.box and contains(c.box, point)), None)
                if cell is not None:
                    found.setdefault(id(cell), []).append(word_block)
        return found

    def _place_box(
        self, block: Block, cell: TableCell | None, row: int, column: int, rows: int, columns: int
    ) -> Quad:
        """A grid place's box: its cell's (a share of it for a spanning cell), else the place's
        share of the table's box."""
        if cell is None or cell.box is None:
            return _grid_box(block.box, TableCell(row=row, column=column), rows, columns)
        if cell.row_span == 1 and cell.column_span == 1:
            return cell.box
        inner = TableCell(row=row - cell.row + 1, column=column - cell.column + 1)
        return _grid_box(cell.box, inner, cell.row_span, cell.column_span)


def _grid_box(box: Quad, cell: TableCell, rows: int, columns: int) -> Quad:
    """The cell's share of `box` cut into a rows × columns grid."""
    xs, ys = [x for x, _ in box], [y for _, y in box]
    x0, y0 = min(xs), min(ys)
    w, h = (max(xs) - x0) / max(columns, 1), (max(ys) - y0) / max(rows, 1)
    left, top = x0 + (cell.column - 1) * w, y0 + (cell.row - 1) * h
    right, bottom = left + cell.column_span * w, top + cell.row_span * h
    return ((left, top), (right, top), (right, bottom), (left, bottom))


class TextractWriter:
    """Writes a DetectDocumentText (or, where a page has layout, AnalyzeDocument) response to
    `out`, one page at a time."""

    def __init__(self, out: IO[bytes], *, job_id: str) -> None:
        self.out = out
        self.job_id = job_id
        self.pages = 0
        self.analyzed = False  # a page has layout: the response is AnalyzeDocument's
        out.write(b'{"Blocks":[')

    def add(self, page: PageResult) -> None:
        self.analyzed = self.analyzed or has_layout(page)
        for block in page_blocks(page, job_id=self.job_id):
            if self.pages or block["BlockType"] != "PAGE":
                self.out.write(b",")
            self.out.write(json.dumps(block, ensure_ascii=False, separators=(",", ":")).encode())
        self.pages += 1

    def close(self, *, model_version: str) -> None:
        """Ends the document: its page count and the model that read it."""
        metadata = {"Pages": self.pages}
        self.out.write(b'],"DocumentMetadata":' + json.dumps(metadata).encode())
        key = "AnalyzeDocumentModelVersion" if self.analyzed else "DetectDocumentTextModelVersion"
        self.out.write(f',"{key}":'.encode() + json.dumps(model_version).encode())
        self.out.write(b"}")
