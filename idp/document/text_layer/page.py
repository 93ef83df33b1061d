"""One PDF page → a PageResult read from its text layer, when the layer covers the page; or,
for a layout model's job, the layer and the page's ruling lines, for the page path to fill the
layout's regions from (idp.document.ocr.steps.born_digital)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from idp.contract.errors import NoTextLayer
from idp.contract.jobs import DispatchedJob
from idp.contract.names import OcrModel, TextLayerMode
from idp.contract.results import Line, PageResult, Quad, RenderInfo, Word
from idp.document.text_layer.extract import Box, LayerWord, TextLayer, extract_text_layer
from idp.document.text_layer.rule import measure_coverage
from idp.document.text_layer.rulings import Ruling, extract_vectors

# (pypdfium2 page, 1-based page number) → the page read from its layer, or None: OCR it.
PageReader = Callable[[Any, int], PageResult | None]


@dataclass(frozen=True)
class PageLayer:
    """What a born-digital page holds exactly, in its rendered pixels: its text layer's lines
    (with their words) and its ruling lines."""

    layer: TextLayer
    rulings: tuple[Ruling, ...]
    # The boxes of the page's other vector drawings (a chart's curves and slanted lines).
    drawings: tuple[tuple[float, float, float, float], ...] = ()

    @property
    def words(self) -> list[LayerWord]:
        return [word for line in self.layer.lines for word in line.words]


# (pypdfium2 page, the scale its image was rendered at) → its layer where it covers the page.
LayerReader = Callable[[Any, float], PageLayer | None]


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


def job_layer_reader(job: DispatchedJob) -> LayerReader | None:
    """What gives a layout job's born-digital pages their text layer; None: read every page
    from its pixels."""
    return layer_reader(job.model, job.options.text_layer)


def page_reader(model: OcrModel, mode: TextLayerMode, *, scale: float) -> PageReader | None:
    """The reader pages of `model` go through before OCR in `mode`; None: OCR every page.

    Only the text-line models (PP-OCRv5, PP-OCRv6) read pages from the layer: PP-StructureV3
    and PaddleOCR-VL run layout (and tables, and the VLM) on the rendered page, so their text
    stays what the engine read.
    """
    if mode == TextLayerMode.OCR or not model.reads_text_lines:
        return None
    return functools.partial(read_page, scale=scale, mode=mode)


def page_layer(pdf_page: Any, scale: float) -> PageLayer | None:
    """The page's text layer and ruling lines at `scale`, where the layer covers what the page
    shows (the rule of `read_page`); None: the page is read from its pixels alone."""
    layer = extract_text_layer(pdf_page, scale=scale)
    if not layer.lines or not measure_coverage(pdf_page, layer).layer_covers_page:
        return None
    vectors = extract_vectors(pdf_page, scale=scale)
    return PageLayer(layer=layer, rulings=tuple(vectors.rulings), drawings=tuple(vectors.drawings))


def layer_reader(model: OcrModel, mode: TextLayerMode) -> LayerReader | None:
    """Where a layout model's pages take their text from the PDF: PP-StructureV3's, unless the
    job asks for OCR (text_layer "ocr"). Text-line models read such pages whole from the layer
    (`page_reader`); PaddleOCR-VL reads every page from its pixels."""
    if mode == TextLayerMode.OCR or model != OcrModel.PP_STRUCTUREV3:
        return None
    return page_layer
