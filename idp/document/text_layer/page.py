"""One PDF page → a PageResult read from its text layer, when the layer covers the page."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from idp.contract.errors import NoTextLayer
from idp.contract.jobs import DispatchedJob
from idp.contract.names import OcrModel, TextLayerMode
from idp.contract.results import Line, PageResult, Quad, RenderInfo, Word
from idp.document.text_layer.extract import Box, TextLayer, extract_text_layer
from idp.document.text_layer.rule import measure_coverage

# (pypdfium2 page, 1-based page number) → the page read from its layer, or None: OCR it.
PageReader = Callable[[Any, int], PageResult | None]


def read_page(
    pdf_page: Any, number: int, *, scale: float, mode: TextLayerMode
) -> PageResult | None:
    """The page from its text layer if the layer covers what the page shows; else None (OCR
    it), or NoTextLayer when `mode` is "only"."""
    layer = extract_text_layer(pdf_page, scale=scale)
    coverage = measure_coverage(pdf_page, layer)
    if coverage.layer_covers_page:
        page = page_from_layer(layer, number)
        page.render = RenderInfo(scale=scale, reason="text layer: boxes at the job's pdf_scale")
        return page
    if mode == TextLayerMode.ONLY:
        raise NoTextLayer(
            f"page {number} has no usable text layer ({coverage.text_ink:.0%} of its ink is "
            f"text the layer holds; a scanned page has none); submit it with text_layer "
            f'"auto" to OCR such pages'
        )
    return None


def page_from_layer(layer: TextLayer, number: int) -> PageResult:
    lines = [
        Line(
            text=line.text,
            box=_quad(line.box),
            confidence=1.0,
            words=[Word(text=word.text, box=_quad(word.box)) for word in line.words],
        )
        for line in layer.lines
    ]
    return PageResult(
        page=number,
        width=layer.width,
        height=layer.height,
        lines=lines,
        text_source="text_layer",
    )


def _quad(box: Box) -> Quad:
    left, top, right, bottom = box
    return ((left, top), (right, top), (right, bottom), (left, bottom))


def text_layer_reader(job: DispatchedJob) -> PageReader | None:
    """The reader a job's pages go through before OCR; None when every page is OCR'd."""
    return page_reader(job.model, job.options.text_layer, scale=job.options.pdf_scale)


def page_reader(model: OcrModel, mode: TextLayerMode, *, scale: float) -> PageReader | None:
    """The reader pages of `model` go through before OCR in `mode`; None: OCR every page.

    Only the text-line models (PP-OCRv5, PP-OCRv6) read pages from the layer: PP-StructureV3
    and PaddleOCR-VL run layout (and tables, and the VLM) on the rendered page, so their text
    stays what the engine read.
    """
    if mode == TextLayerMode.OCR or not model.reads_text_lines:
        return None
    return functools.partial(read_page, scale=scale, mode=mode)
