"""PaddleOCR's documented output (OCRResult, PP-StructureV3's page JSON and Markdown) as
this system's lines, blocks and page Markdown."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np

from idp.contract.quads import VERTICAL_RATIO, area, bounds, overlap, quad_span
from idp.contract.results import Line, Quad, ReviewReason, Stage, Word
from idp.document.ocr.engine import PageContent
from idp.document.ocr.steps.aligned_tables import with_aligned_tables
from idp.document.ocr.steps.regions import Region, lay_out


def _clip(value: float, upper: int) -> float:
    return float(min(max(value, 0.0), float(upper)))


def quad_from_points(points: Any, width: int, height: int) -> Quad:
    """A 4-point box (clockwise from top-left) inside the page, from a polygon or [x1,y1,x2,y2]."""
    array = np.asarray(points, dtype=np.float64)
    if array.ndim == 1 and array.size == 4:
        x1, y1, x2, y2 = array.tolist()
        array = np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]])
    array = array.reshape(-1, 2)
    if array.shape[0] != 4:
        # A polygon with more vertices: use its axis-aligned bounding box.
        x1, y1 = array.min(axis=0).tolist()
        x2, y2 = array.max(axis=0).tolist()
        array = np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]])
    pts = [(_clip(x, width), _clip(y, height)) for x, y in array.tolist()]
    return (pts[0], pts[1], pts[2], pts[3])


def lines_from_ocr(
    result: Mapping[str, Any],
    width: int,
    height: int,
    *,
    token_confidences: Mapping[str, Sequence[float]] | None = None,
) -> list[Line]:
    """PaddleOCR's OCRResult (rec_texts, rec_scores, rec_polys, and text_word /
    text_word_region when read with return_word_box) → lines, in the engine's order (by y:
    idp.document.ocr.steps.reading_order puts PP-OCRv5's in reading order). Where
    `token_confidences` has a line's text, its words carry them (the decoder's, per token)."""
    texts = list(result.get("rec_texts") or [])
    scores = list(result.get("rec_scores") or [])
    raw_polys = result.get("rec_polys")
    polys = list(raw_polys) if raw_polys is not None else []
    word_texts = list(result.get("text_word") or [])
    word_boxes = list(result.get("text_word_region") or [])
    lines: list[Line] = []
    for index, (text, score, poly) in enumerate(zip(texts, scores, polys, strict=False)):
        if not str(text).strip():
            continue
        words: list[Word] = []
        if index < len(word_texts) and index < len(word_boxes):
            words = words_on_line(
                poly, str(text), word_texts[index], word_boxes[index], width, height
            )
            confidences = (token_confidences or {}).get(str(text))
            if confidences is not None and len(confidences) == len(words):
                words = [
                    word.model_copy(update={"confidence": round(float(c), 4)})
                    for word, c in zip(words, confidences, strict=True)
                ]
        lines.append(
            Line(
                text=str(text),
                box=quad_from_points(poly, width, height),
                confidence=float(min(max(float(score), 0.0), 1.0)),
                words=words,
            )
        )
    return lines


def words_on_line(
    poly: Any, line_text: str, texts: Any, boxes: Any, width: int, height: int
) -> list[Word]:
    """A line's words (its whitespace-separated tokens) on its own quad.

    PaddleX (cal_ocr_word_box) measures pieces of the line from the recognizer's character
    columns (words, punctuation and numbers apart; each CJK character alone), each as an
    axis-aligned box across the line's extent. The pieces are joined back into the line's
    tokens, and a token's span along the reading direction, as a share of the line, is placed
    on the line's quad, so a skewed line's words lie along it. [] when they do not add up.
    """
    quad = np.asarray(poly, dtype=np.float64).reshape(-1, 2)
    if quad.shape[0] != 4 or len(texts) != len(boxes):
        return []
    line = quad_from_points(quad, width, height)
    # PaddleX's own test (is_vertical_text): taller than wide by VERTICAL_RATIO, axis-aligned.
    extent = quad.max(axis=0) - quad.min(axis=0)
    vertical = bool(extent[0] > 0 and extent[1] / extent[0] > VERTICAL_RATIO)
    # As PaddleX measures the columns: along x from corner 0 to 1, or down y from 0 to 2.
    axis, start, end = (1, quad[0][1], quad[2][1]) if vertical else (0, quad[0][0], quad[1][0])
    if end - start <= 0:
        return []
    pieces: list[tuple[str, float, float]] = []
    for raw, box in zip(texts, boxes, strict=True):
        text = str(raw)
        coords = np.asarray(box, dtype=np.float64).reshape(-1, 2)[:, axis]
        t0, t1 = np.clip((coords.min() - start, coords.max() - start) / (end - start), 0, 1)
        # A run of non-ASCII letters and punctuation is one piece, spaces and all ("źń. Ç"):
        # its parts between spaces share its span by their place in it.
        for part in re.finditer(r"\S+", text):
            share = (t1 - t0) / len(text)
            pieces.append((part.group(), t0 + share * part.start(), t0 + share * part.end()))
    words: list[Word] = []
    for token in line_text.split():
        joined, first, last = "", 1.0, 0.0
        while joined != token:
            if not pieces or not token.startswith(joined + pieces[0][0]):
                return []
            piece, t0, t1 = pieces.pop(0)
            joined, first, last = joined + piece, min(first, t0), max(last, t1)
        words.append(Word(text=token, box=quad_span(line, first, last, vertical=vertical)))
    return words if not pieces else []


# A table the layout model missed, read from its text's alignment (steps.aligned_tables).
ALIGNED_TABLE_STAGE: Final = Stage(
    name="table",
    model=None,
    note="a table the layout missed, its grid from the text's alignment (steps.aligned_tables)",
)


def structure_page_content(data: Mapping[str, Any], width: int, height: int) -> PageContent:
    """A PP-StructureV3 page result (its documented JSON: parsing_res_list in reading order,
    overall_ocr_res, table_res_list with each table's HTML and cell boxes, layout_det_res) →
    typed blocks with their lines and cells, the lines in that order, and the page's Markdown
    (idp.document.ocr.steps.regions)."""
    lines = _first_reads(lines_from_ocr(data.get("overall_ocr_res") or {}, width, height))
    tables = list(data.get("table_res_list") or [])
    regions: list[Region] = []
    for item in data.get("parsing_res_list") or []:
        label = str(item.get("block_label", "text"))
        content = item.get("block_content")
        text = str(content) if content is not None and str(content).strip() else None
        box = quad_from_points(item.get("block_bbox", [0, 0, 0, 0]), width, height)
        if label != "table":
            regions.append(Region(label=label, box=box, text=text))
            continue
        table = _table_of(item, tables)
        cell_boxes = [
            quad_from_points(cell, width, height) for cell in table.get("cell_box_list") or []
        ]
        html = table.get("pred_html") or text
        regions.append(Region(label=label, box=box, html=html, cell_boxes=cell_boxes))
    laid_out = len(regions)
    regions, aligned = with_aligned_tables(regions, lines)
    laid = lay_out(regions, lines)
    found = (data.get("layout_det_res") or {}).get("boxes")
    return PageContent(
        lines=laid.lines,
        blocks=laid.blocks,
        markdown=laid.markdown or None,
        layout_regions=len(found) if found is not None else laid_out,
        stages=[ALIGNED_TABLE_STAGE] if aligned else [],
        doubts=[ReviewReason.TABLE_MISSED] if aligned else [],
    )


def _table_of(block: Mapping[str, Any], tables: list[Any]) -> Mapping[str, Any]:
    """The table result of a table block, taken out of `tables`. PaddleX lists the results in
    the order the layout model found the tables, not in reading order: a block's result is the
    one whose HTML is the block's content (of several, the one with most cell centres in its
    box), else the one with most cell centres in its box."""
    if not tables:
        return {}
    content = block.get("block_content")
    x0, y0, x1, y1 = (float(v) for v in block.get("block_bbox", [0, 0, 0, 0]))

    def inside(table: Mapping[str, Any]) -> int:
        centres = [((c[0] + c[2]) / 2, (c[1] + c[3]) / 2) for c in table.get("cell_box_list") or []]
        return sum(x0 <= x <= x1 and y0 <= y <= y1 for x, y in centres)

    same = [t for t in tables if content is not None and t.get("pred_html") == content]
    best = max(same or tables, key=inside)  # two tables of one HTML: the one in the box
    tables.remove(best)
    return dict(best)


# A line this much inside an earlier line's box is a second read of that line.
_REREAD_SHARE: Final = 0.5


def _first_reads(lines: list[Line]) -> list[Line]:
    """The page's lines without PaddleX's second reads of them. Where a layout region reaches
    past the lines the detector found in it, PP-StructureV3 reads the uncovered strip again and
    appends what it reads to the page's OCR; a strip that cuts through a line already read gives
    that line again, garbled (half its glyphs). A line mostly inside an earlier one is dropped."""
    kept: list[Line] = []
    for line in lines:
        box = bounds(line.box)
        size = area(box)
        if size > 0 and any(overlap(box, bounds(o.box)) / size >= _REREAD_SHARE for o in kept):
            continue
        kept.append(line)
    return kept
