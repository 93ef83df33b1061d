"""The text layer of born-digital PDFs: extraction, normalization, the coverage rule, and
ocr_document reading pages from the layer while OCR'ing the rest."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pypdfium2  # type: ignore[import-untyped]
import pytest

from devkit.synthetic_pdf import (
    LIGATURE_LINES,
    LIGATURE_TEXT,
    PageSpec,
    born_digital_pdf,
    fine_print,
    garbled,
    mixed_pages,
    page_lines,
    rule_pages,
)
from idp.contract.errors import NoTextLayer
from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel, TextLayerMode
from idp.document.ocr.pipeline import ocr_document
from idp.document.text_layer.extract import TextLayer, extract_text_layer
from idp.document.text_layer.normalize import is_unreadable, normalize_line
from idp.document.text_layer.page import page_reader
from idp.document.text_layer.rule import Coverage, measure_coverage
from tests.idp.document.ocr.test_pipeline import RecordingEngine


def _pdf_page(specs: list[PageSpec], index: int = 0) -> Iterator[Any]:
    document = pypdfium2.PdfDocument(born_digital_pdf(specs))
    page = document[index]
    try:
        yield page
    finally:
        page.close()
        document.close()


@pytest.fixture
def vector_page() -> Iterator[Any]:
    yield from _pdf_page([PageSpec(lines=page_lines(1, 8), fine_print=fine_print(1))])


def _layer(spec: PageSpec, scale: float = 2.0) -> TextLayer:
    for page in _pdf_page([spec]):
        return extract_text_layer(page, scale=scale)
    raise AssertionError("no page")


def _coverage(spec: PageSpec) -> Coverage:
    for page in _pdf_page([spec]):
        return measure_coverage(page, extract_text_layer(page, scale=2.0))
    raise AssertionError("no page")


# -- extraction ----------------------------------------------------------------------------------
def test_a_vector_page_gives_its_exact_lines_in_order_fine_print_included(vector_page: Any) -> None:
    # WHEN the text layer of a vector page with 2.5 pt fine print at its foot is read
    layer = extract_text_layer(vector_page, scale=2.0)

    # THEN every line comes back exactly, in reading order, the fine print last
    assert [line.text for line in layer.lines] == [*page_lines(1, 8), fine_print(1)]
    assert layer.invisible_chars == 0
    assert layer.unreadable_chars == 0


def test_boxes_are_in_the_rendered_pages_pixel_space_and_frame_the_ink(vector_page: Any) -> None:
    # GIVEN the page rendered as the pipeline renders it (2×, 144 dpi)
    layer = extract_text_layer(vector_page, scale=2.0)
    grey = vector_page.render(scale=2.0, grayscale=True).to_numpy()

    # THEN the layer's page size is the rendered size, and each line's box holds its own ink
    assert (layer.width, layer.height) == (grey.shape[1], grey.shape[0]) == (1190, 1684)
    first = layer.lines[0].box
    assert first[0] == pytest.approx(96.0, abs=4)  # the 48 pt margin, 96 px at 2×
    for line in layer.lines:
        left, top, right, bottom = (round(v) for v in line.box)
        assert (grey[top : bottom + 1, left : right + 1] < 128).any(), line.text
    # AND between two lines there is no ink (a box does not spill into the next line)
    gap = grey[round(layer.lines[0].box[3]) + 3 : round(layer.lines[1].box[1]) - 3, 90:700]
    assert (gap >= 128).all()


def test_boxes_follow_the_jobs_pdf_scale(vector_page: Any) -> None:
    at_2 = extract_text_layer(vector_page, scale=2.0)
    at_1 = extract_text_layer(vector_page, scale=1.0)
    assert (at_1.width, at_1.height) == (595, 842)
    for a, b in zip(at_1.lines, at_2.lines, strict=True):
        assert np.allclose(np.array(a.box) * 2, b.box, atol=1.0)


def test_a_rotated_page_reads_upright_with_boxes_in_the_rotated_pixels() -> None:
    # GIVEN a landscape page kept portrait with /Rotate 90 (text drawn turned)
    spec = PageSpec(lines=page_lines(6, 8), rotation=90)
    for page in _pdf_page([spec]):
        layer = extract_text_layer(page, scale=2.0)
        grey = page.render(scale=2.0, grayscale=True).to_numpy()

    # THEN its lines read in order, and their boxes are wide, in the landscape rendering
    assert [line.text for line in layer.lines] == list(page_lines(6, 8))
    assert (layer.width, layer.height) == (grey.shape[1], grey.shape[0]) == (1684, 1190)
    for line in layer.lines:
        left, top, right, bottom = line.box
        assert right - left > bottom - top
        assert (grey[round(top) : round(bottom) + 1, round(left) : round(right) + 1] < 128).any()


def test_ligatures_are_letters_and_a_hyphenated_word_keeps_its_visible_hyphen() -> None:
    # GIVEN a page set with ﬁ/ﬂ ligature glyphs and a word hyphenated at a line end
    layer = _layer(PageSpec(lines=LIGATURE_LINES))
    # THEN the text reads as the page shows it: letters for ligatures, "hyphen-" / "ation"
    assert "\n".join(line.text for line in layer.lines) == LIGATURE_TEXT


def test_each_line_s_words_spell_it_and_sit_inside_it_left_to_right() -> None:
    # GIVEN a page of lines, ligatures and a hyphenated word among them
    layer = _layer(PageSpec(lines=(*page_lines(2, 6), *LIGATURE_LINES)))

    # THEN every line has its words, boxed by their glyphs, in order along the line
    assert layer.lines
    for line in layer.lines:
        assert [word.text for word in line.words] == line.text.split()
        lefts = [word.box[0] for word in line.words]
        assert lefts == sorted(lefts)
        left, top, right, bottom = line.box
        for word in line.words:
            assert left <= word.box[0] < word.box[2] <= right
            assert top <= word.box[1] < word.box[3] <= bottom


def test_an_invisible_layer_is_counted_but_gives_no_lines() -> None:
    spec = PageSpec(lines=page_lines(4, 6), kind="invisible-layer", layer_text=page_lines(4, 6))
    layer = _layer(spec)
    assert layer.lines == []
    assert layer.chars == layer.invisible_chars > 100


# -- normalization -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("the \ufb01nal \ufb02oor of the o\ufb03ce", "the final floor of the office"),
        ("co\u00adoperate", "cooperate"),  # a soft hyphen inside a line is invisible
        ("hyphen\u00ad", "hyphen-"),  # one that breaks the line is drawn
        ("12\u00a0500\u202fEUR", "12 500 EUR"),
        ("cafe\u0301", "café"),  # NFC
        ("x² and ½", "x² and ½"),  # compatibility characters stay as printed
        ("  spaced   out\t", "spaced out"),
    ],
)
def test_normalize_line(raw: str, expected: str) -> None:
    assert normalize_line(raw) == expected


def test_unreadable_characters_are_recognized() -> None:
    assert is_unreadable("\ue000")  # private use
    assert is_unreadable("\ufffd")
    assert is_unreadable("\x07")
    assert not is_unreadable("é")
    assert not is_unreadable(" ")


# -- the rule ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kind", "covers"),
    [
        ("vector", True),
        ("vector, ruled like a table", True),
        ("vector + picture of text", False),
        ("scanned", False),
        ("scan + invisible garbled layer", False),
        ("scan + invisible matching layer", False),
    ],
)
def test_the_rule_reads_only_pages_whose_layer_covers_their_ink(kind: str, covers: bool) -> None:
    coverage = _coverage(rule_pages()[kind][0])
    assert coverage.layer_covers_page is covers, coverage


def test_a_blank_page_is_covered_and_empty() -> None:
    coverage = _coverage(PageSpec(lines=()))
    assert coverage.ink_pixels == 0
    assert coverage.layer_covers_page


def test_a_layer_of_unreadable_characters_is_not_used() -> None:
    coverage = Coverage(ink_pixels=1000, text_ink=1.0, unreadable=0.4)
    assert not coverage.layer_covers_page


# -- ocr_document with the text layer ------------------------------------------------------------
def _mixed(mode: TextLayerMode = TextLayerMode.AUTO, **kwargs: Any) -> Any:
    engine = RecordingEngine()
    options = JobOptions(text_layer=mode)
    outcome = ocr_document(
        born_digital_pdf(mixed_pages()),
        engine=engine,
        options=options,
        read_page=page_reader(OcrModel.PP_OCRV5, mode, scale=options.pdf_scale),
        **kwargs,
    )
    return engine, outcome


def test_only_the_pages_without_a_usable_layer_reach_the_engine() -> None:
    # GIVEN the mixed document: vector, scan, vector, scan under a garbled invisible layer,
    # ligatures + hyphenation, rotated vector
    engine, outcome = _mixed()

    # THEN the engine saw the two scans only, and the pages came back in order
    assert engine.seen == [2, 4]
    assert [p.page for p in outcome.pages] == [1, 2, 3, 4, 5, 6]
    sources = [p.text_source for p in outcome.pages]
    assert sources == ["text_layer", "ocr", "text_layer", "ocr", "text_layer", "text_layer"]
    specs = mixed_pages()
    for page in (1, 3, 5, 6):
        assert outcome.pages[page - 1].text == specs[page - 1].text
    assert outcome.pages[0].lines[-1].text == fine_print(1)
    assert all(line.confidence == 1.0 for line in outcome.pages[0].lines)
    assert outcome.timings_ms["text_layer"] > 0
    # AND the garbled invisible layer was not taken for the page's text
    assert garbled(page_lines(4, 6))[0] not in outcome.pages[3].text


def test_a_chunk_of_a_born_digital_document_keeps_the_documents_page_numbers() -> None:
    # GIVEN pages 2..5 of the mixed document, copied into a chunk's own PDF (as fan-out does)
    import io

    source = pypdfium2.PdfDocument(born_digital_pdf(mixed_pages()))
    part = pypdfium2.PdfDocument.new()
    part.import_pages(source, pages=[1, 2, 3, 4])
    buffer = io.BytesIO()
    part.save(buffer)
    engine = RecordingEngine()
    options = JobOptions()

    # WHEN the chunk is read with its page offset
    outcome = ocr_document(
        buffer.getvalue(),
        engine=engine,
        options=options,
        page_offset=1,
        read_page=page_reader(OcrModel.PP_OCRV5, TextLayerMode.AUTO, scale=2.0),
    )

    # THEN pages carry the whole document's numbers and the scans alone were OCR'd
    assert [p.page for p in outcome.pages] == [2, 3, 4, 5]
    assert engine.seen == [2, 4]
    assert [p.text_source for p in outcome.pages] == ["ocr", "text_layer", "ocr", "text_layer"]


def test_a_page_range_reads_only_its_pages() -> None:
    engine, outcome = _mixed(first_page=3, last_page=4)
    assert [p.page for p in outcome.pages] == [3, 4]
    assert engine.seen == [4]


def test_only_fails_on_the_first_page_without_a_text_layer() -> None:
    with pytest.raises(NoTextLayer, match="page 2 has no usable text layer") as raised:
        _mixed(TextLayerMode.ONLY)
    assert raised.value.code == "NO_TEXT_LAYER"


def test_ocr_mode_and_layout_models_read_every_page_from_its_pixels() -> None:
    assert page_reader(OcrModel.PP_OCRV5, TextLayerMode.OCR, scale=2.0) is None
    assert page_reader(OcrModel.PP_STRUCTUREV3, TextLayerMode.AUTO, scale=2.0) is None
    assert page_reader(OcrModel.PADDLEOCR_VL, TextLayerMode.AUTO, scale=2.0) is None


def test_a_page_too_large_to_render_fails_as_it_would_for_ocr() -> None:
    # GIVEN a PDF page that would be 800 MP at 2× (read from the layer, it is never rendered)
    from devkit import synthetic
    from idp.contract.errors import ImageTooLarge

    # WHEN it is read with text_layer "auto"
    # THEN it is refused by the same size limit as a rendered page
    with pytest.raises(ImageTooLarge, match="PDF page 1 rendered at 2"):
        ocr_document(
            synthetic.oversized_page_pdf(),
            engine=RecordingEngine(),
            options=JobOptions(),
            read_page=page_reader(OcrModel.PP_OCRV5, TextLayerMode.AUTO, scale=2.0),
        )
