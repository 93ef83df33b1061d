"""result.textract.json: a job's pages as an Amazon Textract DetectDocumentText response.

Tools that already read Textract's JSON (amazon-textract-textractor, textract-trp, IDP
accelerators that take `textractBlocks`) read a job's text through it unchanged. Each page is a
PAGE block whose children are its LINE blocks, in the result's reading order; each line's
children are its WORD blocks. Geometry is Textract's: a BoundingBox and a 4-point Polygon as
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

from idp.contract.quads import is_vertical, quad_span
from idp.contract.results import Line, PageResult, Quad, Word

# A fixed namespace for the block ids (uuid5 of job id, page and position).
_ID_NAMESPACE: Final = uuid.UUID("0b5d7c1e-6f44-4a61-9d0e-7a0f3c2b9e15")
_WHOLE_PAGE: Final[Quad] = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0))


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


def page_blocks(page: PageResult, *, job_id: str) -> list[dict[str, Any]]:
    """One page's PAGE, LINE and WORD blocks, in Textract's order (the page first, each line
    before its words)."""

    def block_id(*position: object) -> str:
        return str(uuid.uuid5(_ID_NAMESPACE, "/".join(map(str, (job_id, page.page, *position)))))

    width, height = max(page.width, 1), max(page.height, 1)
    line_blocks: list[dict[str, Any]] = []
    for index, line in enumerate(page.lines):
        confidence = round(line.confidence * 100.0, 4)
        words = [
            {
                "BlockType": "WORD",
                "Confidence": confidence,
                "Text": word.text,
                "TextType": "PRINTED",
                "Geometry": geometry(word.box, width, height),
                "Id": block_id("word", index, number),
                "Page": page.page,
            }
            for number, word in enumerate(line.words or estimated_words(line))
        ]
        line_blocks.append(
            {
                "BlockType": "LINE",
                "Confidence": confidence,
                "Text": line.text,
                "Geometry": geometry(line.box, width, height),
                "Id": block_id("line", index),
                "Relationships": [{"Type": "CHILD", "Ids": [word["Id"] for word in words]}],
                "Page": page.page,
            }
        )
        line_blocks.extend(words)
    page_block = {
        "BlockType": "PAGE",
        "Geometry": geometry(_WHOLE_PAGE, 1, 1),
        "Id": block_id("page"),
        "Relationships": [
            {
                "Type": "CHILD",
                "Ids": [block["Id"] for block in line_blocks if block["BlockType"] == "LINE"],
            }
        ],
        "Page": page.page,
    }
    return [page_block, *line_blocks]


class TextractWriter:
    """Writes a DetectDocumentText response to `out`, one page at a time."""

    def __init__(self, out: IO[bytes], *, job_id: str) -> None:
        self.out = out
        self.job_id = job_id
        self.pages = 0
        out.write(b'{"Blocks":[')

    def add(self, page: PageResult) -> None:
        for block in page_blocks(page, job_id=self.job_id):
            if self.pages or block["BlockType"] != "PAGE":
                self.out.write(b",")
            self.out.write(json.dumps(block, ensure_ascii=False, separators=(",", ":")).encode())
        self.pages += 1

    def close(self, *, model_version: str) -> None:
        """Ends the document: its page count and the model that read it."""
        metadata = {"Pages": self.pages}
        self.out.write(b'],"DocumentMetadata":' + json.dumps(metadata).encode())
        self.out.write(b',"DetectDocumentTextModelVersion":' + json.dumps(model_version).encode())
        self.out.write(b"}")
