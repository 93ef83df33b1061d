"""PaddleOCR's documented output (OCRResult, PP-StructureV3's page JSON and Markdown) as
this system's lines, blocks and page Markdown."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from idp.contract.results import Block, Line, Quad
from idp.document.ocr.engine import PageContent


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


def lines_from_ocr(result: Mapping[str, Any], width: int, height: int) -> list[Line]:
    """PaddleOCR's OCRResult (rec_texts, rec_scores, rec_polys) → lines, in the engine's order
    (by y: idp.document.ocr.reading_order puts PP-OCRv5's in reading order)."""
    texts = list(result.get("rec_texts") or [])
    scores = list(result.get("rec_scores") or [])
    raw_polys = result.get("rec_polys")
    polys = list(raw_polys) if raw_polys is not None else []
    lines: list[Line] = []
    for text, score, poly in zip(texts, scores, polys, strict=False):
        if not str(text).strip():
            continue
        lines.append(
            Line(
                text=str(text),
                box=quad_from_points(poly, width, height),
                confidence=float(min(max(float(score), 0.0), 1.0)),
            )
        )
    return lines


_HTML_LABELS: Final = frozenset({"table"})


def structure_page_content(
    data: Mapping[str, Any], markdown: str | None, width: int, height: int
) -> PageContent:
    """A PP-StructureV3 page result (its documented JSON: parsing_res_list, overall_ocr_res,
    table_res_list) plus its page Markdown → lines, blocks and markdown."""
    ocr = data.get("overall_ocr_res") or {}
    lines = lines_from_ocr(ocr, width, height)
    tables = [t.get("pred_html") for t in data.get("table_res_list") or []]
    blocks: list[Block] = []
    table_index = 0
    for item in data.get("parsing_res_list") or []:
        label = str(item.get("block_label", "text"))
        content = item.get("block_content")
        content = str(content) if content is not None and str(content).strip() else None
        box = quad_from_points(item.get("block_bbox", [0, 0, 0, 0]), width, height)
        if label in _HTML_LABELS:
            html = content
            if html is None and table_index < len(tables):
                html = tables[table_index]
            table_index += 1
            blocks.append(Block(type=label, box=box, html=html))
        else:
            blocks.append(Block(type=label, box=box, text=content))
    return PageContent(lines=lines, blocks=blocks, markdown=markdown or None)
