"""ocr_document: pages flow from the decoder to the engine in order, with facts and timings."""

from __future__ import annotations

import hashlib

import pytest

from devkit import synthetic
from idp.contract.errors import EncryptedDocument
from idp.contract.jobs import JobOptions
from idp.contract.names import MediaType
from idp.contract.results import EngineInfo, Line
from idp.document.decode import PageImage
from idp.document.ocr.engine import PageContent
from idp.document.ocr.pipeline import ocr_document


class RecordingEngine:
    """A stand-in engine that reports each page's size as its only line (no OCR), on a box
    tall enough that the page's verdict never asks for a second read."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    @property
    def info(self) -> EngineInfo:
        return EngineInfo(name="recording", version="0", models=[])

    def recognize(self, page: PageImage) -> PageContent:
        self.seen.append(page.page)
        box = ((10.0, 10.0), (300.0, 10.0), (300.0, 50.0), (10.0, 50.0))
        text = f"{page.width}x{page.height}"
        return PageContent(lines=[Line(text=text, box=box, confidence=1.0)])


def test_every_page_is_recognized_in_order_with_facts_and_timings() -> None:
    # GIVEN a 3-page text PDF of 500×120 pt pages
    data = synthetic.text_pdf([["one"], ["two"], ["three"]])
    engine = RecordingEngine()
    # WHEN it is OCR'd at 1.5× (a job option)
    outcome = ocr_document(data, engine=engine, options=JobOptions(pdf_scale=1.5), max_pages=3)
    # THEN pages 1..3 went through the engine in order, at the requested scale
    assert engine.seen == [1, 2, 3]
    assert [p.page for p in outcome.pages] == [1, 2, 3]
    assert [p.text for p in outcome.pages] == ["750x180"] * 3
    # AND the facts and per-stage timings describe the input
    assert outcome.media_type is MediaType.PDF
    assert outcome.page_count == 3
    assert outcome.sha256 == hashlib.sha256(data).hexdigest()
    stages = {"open", "rasterize", "ocr"}
    assert stages <= set(outcome.timings_ms)
    # and each step of the page path its own share of "ocr" (a bare engine's: no orientation)
    steps = {"step.engine", "step.verdict", "step.gutters", "step.reading_order"}
    assert steps <= set(outcome.timings_ms)
    assert set(outcome.timings_ms) - stages == {
        name for name in outcome.timings_ms if name.startswith("step.")
    }
    source = outcome.source(bucket="b", key="input/PP-OCRv5/x.pdf")
    assert (source.media_type, source.page_count, source.size_bytes) == (
        "application/pdf",
        3,
        len(data),
    )


def test_unusable_input_fails_before_the_engine_sees_a_page() -> None:
    engine = RecordingEngine()
    with pytest.raises(EncryptedDocument):
        ocr_document(synthetic.encrypted_pdf(), engine=engine, options=JobOptions())
    assert engine.seen == []


class BatchRecordingEngine(RecordingEngine):
    """A stand-in multi-page engine: records how many pages each call carried."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[int]] = []

    def recognize_pages(self, pages: list[PageImage]) -> list[PageContent]:
        self.batches.append([page.page for page in pages])
        return [self.recognize(page) for page in pages]


def test_a_multi_page_engine_gets_pages_in_batches_in_order() -> None:
    # GIVEN a 5-page PDF and an engine that takes several pages per call
    data = synthetic.text_pdf([[str(n)] for n in range(1, 6)])
    engine = BatchRecordingEngine()

    # WHEN it is OCR'd with batches of 2 pages
    outcome = ocr_document(data, engine=engine, options=JobOptions(), max_pages=5, page_batch=2)

    # THEN pages went over in batches of at most 2, in order, and came back in order
    assert engine.batches == [[1, 2], [3, 4]]  # the last single page goes through recognize()
    assert engine.seen == [1, 2, 3, 4, 5]
    assert [p.page for p in outcome.pages] == [1, 2, 3, 4, 5]


def test_a_single_page_engine_ignores_the_batch_setting() -> None:
    # GIVEN an engine without recognize_pages
    data = synthetic.text_pdf([["a"], ["b"], ["c"]])
    engine = RecordingEngine()

    # WHEN a batch size is asked for
    outcome = ocr_document(data, engine=engine, options=JobOptions(), max_pages=3, page_batch=4)

    # THEN it still sees one page at a time, in order
    assert engine.seen == [1, 2, 3]
    assert len(outcome.pages) == 3


class SmallPrintEngine(RecordingEngine):
    """A stand-in engine reading one line of 5 pt print: 10 px high at 2×, taller on a page
    rendered at a higher scale."""

    def recognize(self, page: PageImage) -> PageContent:
        self.seen.append(page.page)
        assert page.render is not None
        height = 5.0 * page.render.scale
        box = ((10.0, 10.0), (40 * height, 10.0), (40 * height, 10 + height), (10.0, 10 + height))
        return PageContent(lines=[Line(text="small print", box=box, confidence=0.97)])


def test_a_page_whose_text_is_too_small_is_read_again_at_a_higher_scale() -> None:
    # GIVEN a vector PDF page whose text the engine reads only 10 px high at 2×
    engine = SmallPrintEngine()

    # WHEN it is OCR'd
    outcome = ocr_document(synthetic.text_pdf([["tiny"]]), engine=engine, options=JobOptions())

    # THEN the page was read twice, and the second read, at a higher scale, was kept
    (page,) = outcome.pages
    assert engine.seen == [1, 1]
    assert page.render is not None
    assert page.render.scale > 2.0
    assert page.quality is not None
    assert page.quality.verdict == "ok"
    assert page.quality.retried is not None
    assert "second read kept" in page.quality.retried
    assert outcome.timings_ms["retry"] > 0
