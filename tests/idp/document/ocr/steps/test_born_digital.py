"""A born-digital page read by a layout engine from its PDF (idp.document.ocr.steps.born_digital):
each of the layer's words read once, whatever regions the layout model gives."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from devkit.synthetic_tables import table_page
from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.contract.results import Quad
from idp.document.decode import PageImage
from idp.document.ocr.engine import LayoutRegion
from idp.document.ocr.pipeline import ocr_document
from idp.document.ocr.registry import EngineRegistry
from idp.document.text_layer.page import page_layer

ROWS = [
    ["Item", "Description", "Qty", "Price"],
    ["A-100", "Steel bracket", "12", "4.50"],
    ["B-220", "Rubber washer", "200", "0.08"],
    ["C-310", "Hinge, brass", "4", "7.25"],
]


class OverlappingLayout:
    """The real engine, its layout model giving every region twice, the second a little
    larger (as a layout model's overlapping boxes of one paragraph)."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def detect_layout(self, page: PageImage) -> list[LayoutRegion]:
        found: list[LayoutRegion] = self._engine.detect_layout(page)
        return found + [dataclasses.replace(r, box=_grown(r.box)) for r in found]


def _grown(box: Quad) -> Quad:
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = box
    return ((x0 - 4, y0 - 4), (x1 + 4, y1 - 4), (x2 + 4, y2 + 4), (x3 - 4, y3 + 4))


@pytest.mark.ocr
def test_regions_over_the_same_words_read_them_once(registry: EngineRegistry) -> None:
    # GIVEN a born-digital page of a caption and a table, and a layout model that gives each
    # of its regions twice, overlapping
    pdf = table_page(ROWS, rules="rows", widths=(60, 160, 50, 60), caption="Parts ordered").pdf
    options = JobOptions()
    reader = registry.get(OcrModel.PP_STRUCTUREV3, "en", options)

    # WHEN PP-StructureV3 reads it from its PDF
    (read,) = ocr_document(
        pdf,
        engine=dataclasses.replace(reader, engine=OverlappingLayout(reader.engine)),
        options=options,
        page_layer=page_layer,
    ).pages

    # THEN every word is read once, from the layer: no region is OCR'd for words another holds
    assert read.text_source == "text_layer"
    assert not any("regions with no text" in (stage.note or "") for stage in read.stages)
    words = read.text.split()
    for word in ["Parts", "ordered", "Description", "A-100", "bracket", "200", "7.25"]:
        assert words.count(word) == 1, word
    assert all(block.lines for block in read.blocks)
