"""The searchable PDF writer on known boxes, read back with poppler (pdftotext, an independent
extractor): pages and sizes as in the input, the text extractable, each word inside its box."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pypdfium2  # type: ignore[import-untyped]
import pytest
from PIL import Image, ImageChops
from pypdf import PdfReader, PdfWriter
from pypdf.generic import ArrayObject, DictionaryObject, NameObject

from devkit import synthetic
from idp.contract.results import Block, Line, PageResult, Quad, Rotation
from idp.document.ocr.steps.geometry import quad_on_original
from idp.document.searchable_pdf import concatenate_pdfs, write_searchable_pdf
from tests.pdftext import assert_words_in_boxes, pdf_text, read_pages

LINES = ["Invoice 2026-0042 due on 30 November", "Total amount: 1,234.56 EUR"]
UNICODE_LINES = ["Café naïve façade über straße", "東京都の請求書 合計 金額"]


def _box(x0: float, y0: float, x1: float, y1: float) -> Quad:
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def _page_result(number: int, width: int, height: int, texts: list[str]) -> PageResult:
    """Lines stacked down the page, each box 60 % of the width and a tenth of the height."""
    lines = [
        Line(
            text=text,
            box=_box(
                width * 0.1, height * (0.1 + 0.2 * row), width * 0.7, height * (0.2 + 0.2 * row)
            ),
            confidence=0.99,
        )
        for row, text in enumerate(texts)
    ]
    return PageResult(page=number, width=width, height=height, lines=lines)


def _write(tmp_path: Path, data: bytes, pages: list[PageResult], name: str = "out.pdf") -> Path:
    out = tmp_path / name
    with out.open("wb") as file:
        write_searchable_pdf(data, pages, file)
    return out


def _scanned_page(texts: list[str], size: tuple[int, int]) -> Image.Image:
    return synthetic.render_page(texts, size=size, font_size=24, margin=20)


def test_a_scanned_pdf_keeps_its_pages_and_sizes_and_its_text_sits_on_the_boxes(
    tmp_path: Path,
) -> None:
    # GIVEN a 2-page scanned PDF (pages of different sizes) and its pages' recognized lines,
    # in the pixel space of pages rendered at 2× (144 dpi)
    images = [_scanned_page(LINES, (600, 300)), _scanned_page(LINES[::-1], (500, 400))]
    data = synthetic.pdf_pages(images)  # 72 dpi: one pixel per point
    results = [
        _page_result(1, 1200, 600, LINES),
        _page_result(2, 1000, 800, LINES[::-1]),
    ]

    # WHEN the searchable PDF is written
    out = _write(tmp_path, data, results)

    # THEN it has the input's pages and page sizes
    pages = read_pages(out)
    assert [(page.width, page.height) for page in pages] == [(600, 300), (500, 400)]
    # AND each page's text is the recognized text, in reading order
    for number, result in enumerate(results, start=1):
        assert pdf_text(out, number).split() == result.text.split()
    # AND every word lies inside its line's box
    for page, result in zip(pages, results, strict=True):
        assert_words_in_boxes(page, result, points_per_pixel=0.5)


def test_a_page_whose_contents_are_an_indirect_array_keeps_them(tmp_path: Path) -> None:
    # GIVEN a scanned page whose /Contents is a reference to an array of streams
    writer = PdfWriter(
        clone_from=io.BytesIO(synthetic.pdf_pages([_scanned_page(LINES, (600, 300))]))
    )
    page = writer.pages[0]
    page[NameObject("/Contents")] = writer._add_object(ArrayObject([page.raw_get("/Contents")]))
    buffer = io.BytesIO()
    writer.write(buffer)

    # WHEN its searchable PDF is written
    out = _write(tmp_path, buffer.getvalue(), [_page_result(1, 1200, 600, LINES)])

    # THEN the page still shows its image, and carries the text
    with pypdfium2.PdfDocument(out) as pdf:
        rendered = pdf[0].render().to_pil().convert("L")
    assert rendered.getextrema()[0] < 100, "the page's own content is gone"
    assert pdf_text(out).split() == " ".join(LINES).split()


def test_the_page_images_are_copied_unchanged(tmp_path: Path) -> None:
    # GIVEN a scanned PDF
    data = synthetic.pdf_pages([_scanned_page(LINES, (600, 300))])

    # WHEN its searchable PDF is written
    out = _write(tmp_path, data, [_page_result(1, 1200, 600, LINES)])

    # THEN the page's image is the same stream, byte for byte
    def image_bytes(pdf: PdfReader) -> bytes:
        (image,) = pdf.pages[0].images
        return image.data

    assert image_bytes(PdfReader(out)) == image_bytes(PdfReader(io.BytesIO(data)))


def test_a_rotated_pdf_page_gets_its_text_where_the_page_is_seen(tmp_path: Path) -> None:
    # GIVEN a PDF page stored landscape and shown portrait (/Rotate 90), and lines recognized
    # on the page as rendered (upright, 300×600 pt at 2×)
    writer = PdfWriter(clone_from=io.BytesIO(synthetic.pdf_pages([_scanned_page([], (600, 300))])))
    writer.pages[0].rotate(90)
    buffer = io.BytesIO()
    writer.write(buffer)
    rotated = buffer.getvalue()
    with pypdfium2.PdfDocument(rotated) as pdf:
        assert pdf[0].get_size() == (300, 600)
    result = _page_result(1, 600, 1200, ["Sideways page", "read upright"])

    # WHEN its searchable PDF is written
    out = _write(tmp_path, rotated, [result])

    # THEN the page is still shown portrait (poppler's -bbox gives the stored size, but word
    # boxes as displayed), and the words sit in their boxes on the page as displayed
    with pypdfium2.PdfDocument(out) as pdf:
        assert (pdf[0].get_size(), pdf[0].get_rotation()) == ((300, 600), 90)
    (page,) = read_pages(out)
    assert pdf_text(out).split() == result.text.split()
    assert_words_in_boxes(page, result, points_per_pixel=0.5)


# The scanner's quarter turns counter-clockwise → the reading's rotation, and the /Rotate
# that shows the page upright.
TURNED = [(1, 270, 90), (2, 180, 180), (3, 90, 270)]


def _read_turned(upright: PageResult, rotation: Rotation) -> PageResult:
    """What a reading of `upright` turned `rotation` gives: its lines, boxes on the page as
    uploaded (the upright page turned back)."""
    width, height = upright.width, upright.height
    if rotation in (90, 270):
        width, height = height, width
    lines = [
        line.model_copy(
            update={
                "box": quad_on_original(line.box, rotation=rotation, width=width, height=height)
            }
        )
        for line in upright.lines
    ]
    return PageResult(page=1, width=width, height=height, rotation=rotation, lines=lines)


@pytest.mark.parametrize("kind", ["pdf", "png"])
@pytest.mark.parametrize(("turns", "rotation", "shown"), TURNED)
def test_a_page_read_turned_is_shown_upright_with_its_text_in_order(
    tmp_path: Path, kind: str, turns: int, rotation: Rotation, shown: int
) -> None:
    # GIVEN a page scanned sideways or upside down, and its lines as read turned upright
    upright = _scanned_page(LINES, (600, 300))
    scan = Image.fromarray(np.rot90(np.asarray(upright), k=turns))
    data = synthetic.pdf_pages([scan]) if kind == "pdf" else synthetic.encode(scan, "PNG")
    scale = 2 if kind == "pdf" else 1  # pixels per point of the page as rendered
    result = _read_turned(_page_result(1, 600 * scale, 300 * scale, LINES), rotation)

    # WHEN its searchable PDF is written
    out = _write(tmp_path, data, [result])

    # THEN a viewer shows it upright (its /Rotate turns it clockwise), as wide as the upright page
    with pypdfium2.PdfDocument(out) as pdf:
        assert (pdf[0].get_rotation(), pdf[0].get_size()) == (shown, (600, 300))
    # AND an extractor reads its lines top to bottom, each left to right
    assert pdf_text(out).split() == " ".join(LINES).split()


def test_a_turned_pdf_page_keeps_its_image_unchanged(tmp_path: Path) -> None:
    # GIVEN a PDF page scanned sideways, read turned
    scan = Image.fromarray(np.rot90(np.asarray(_scanned_page(LINES, (600, 300)))))
    data = synthetic.pdf_pages([scan])
    result = _read_turned(_page_result(1, 1200, 600, LINES), 270)

    # WHEN its searchable PDF is written
    out = _write(tmp_path, data, [result])

    # THEN the page's image is the same stream, byte for byte: only the page's /Rotate changed
    def image_bytes(pdf: PdfReader) -> bytes:
        (image,) = pdf.pages[0].images
        return image.data

    assert image_bytes(PdfReader(out)) == image_bytes(PdfReader(io.BytesIO(data)))


def test_a_stored_rotate_and_the_readings_turn_add_up(tmp_path: Path) -> None:
    # GIVEN an upright scan stored with a wrong /Rotate 90 (shown sideways), read turned 90°
    # counter-clockwise
    scan = _scanned_page(LINES, (600, 300))
    writer = PdfWriter(clone_from=io.BytesIO(synthetic.pdf_pages([scan])))
    writer.pages[0].rotate(90)
    buffer = io.BytesIO()
    writer.write(buffer)
    result = _read_turned(_page_result(1, 1200, 600, LINES), 90)

    # WHEN its searchable PDF is written
    out = _write(tmp_path, buffer.getvalue(), [result])

    # THEN the two turns cancel: no /Rotate is left, and the text reads in order
    with pypdfium2.PdfDocument(out) as pdf:
        assert (pdf[0].get_rotation(), pdf[0].get_size()) == (0, (600, 300))
    assert pdf_text(out).split() == " ".join(LINES).split()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "TIFF"])
def test_image_inputs_become_one_page_per_frame_at_their_resolution(
    tmp_path: Path, fmt: str
) -> None:
    # GIVEN an image at 150 dpi (a 3-frame TIFF) and the recognized lines of each frame
    frames = [_scanned_page(LINES, (900, 450)) for _ in range(3 if fmt == "TIFF" else 1)]
    data = (
        synthetic.encode_pages(frames, fmt, dpi=(150, 150))
        if len(frames) > 1
        else synthetic.encode(frames[0], fmt, dpi=(150, 150))
    )
    results = [_page_result(n, 900, 450, LINES) for n in range(1, len(frames) + 1)]

    # WHEN its searchable PDF is written
    out = _write(tmp_path, data, results)

    # THEN each frame is a page of the frame's size at its resolution (900 px at 150 dpi = 432 pt)
    pages = read_pages(out)
    assert [(page.width, page.height) for page in pages] == [(432, 216)] * len(frames)
    # AND each page's text is the recognized text, every word inside its box
    for number, (page, result) in enumerate(zip(pages, results, strict=True), start=1):
        assert pdf_text(out, number).split() == result.text.split()
        assert_words_in_boxes(page, result, points_per_pixel=72 / 150)


@pytest.mark.parametrize("fmt", ["PNG", "TIFF"])
def test_lossless_images_are_embedded_without_loss(tmp_path: Path, fmt: str) -> None:
    # GIVEN a colour PNG/TIFF page
    image = _scanned_page(LINES, (700, 200))
    image.paste((200, 30, 40), (10, 150, 690, 190))
    data = synthetic.encode(image, fmt)

    # WHEN its searchable PDF is written
    out = _write(tmp_path, data, [_page_result(1, 700, 200, LINES)])

    # THEN the embedded image decodes to the very same pixels
    (embedded,) = PdfReader(out).pages[0].images
    assert embedded.image is not None
    assert ImageChops.difference(embedded.image.convert("RGB"), image).getbbox() is None


def test_a_jpeg_is_embedded_as_uploaded(tmp_path: Path) -> None:
    # GIVEN a JPEG page
    data = synthetic.encode(_scanned_page(LINES, (700, 200)), "JPEG", quality=85)

    # WHEN its searchable PDF is written
    out = _write(tmp_path, data, [_page_result(1, 700, 200, LINES)])

    # THEN the page's image is the JPEG itself, not a re-encoding of it
    resources = PdfReader(out).pages[0]["/Resources"].get_object()
    assert isinstance(resources, DictionaryObject)
    xobjects = resources["/XObject"].get_object()
    assert isinstance(xobjects, DictionaryObject)
    (embedded,) = (xobject.get_object() for xobject in xobjects.values())
    assert embedded["/Filter"] == "/DCTDecode"
    assert embedded.get_data() == data


def test_accented_and_cjk_text_is_extractable(tmp_path: Path) -> None:
    # GIVEN a page whose recognized lines hold accents and CJK characters
    data = synthetic.encode(_scanned_page([], (800, 400)), "PNG")
    result = _page_result(1, 800, 400, UNICODE_LINES)

    # WHEN its searchable PDF is written
    out = _write(tmp_path, data, [result])

    # THEN poppler extracts the very same characters
    assert pdf_text(out).split() == " ".join(UNICODE_LINES).split()


def test_a_born_digital_page_keeps_its_own_text_only(tmp_path: Path) -> None:
    # GIVEN a PDF page of vector text and the lines the OCR read on it
    data = synthetic.text_pdf([LINES])
    result = _page_result(1, 1000, 240, LINES)

    # WHEN its searchable PDF is written
    out = _write(tmp_path, data, [result])

    # THEN its text is extracted once, not twice
    assert pdf_text(out).split() == " ".join(LINES).split()


def test_parts_concatenate_in_order(tmp_path: Path) -> None:
    # GIVEN the searchable PDFs of two chunks of a document
    parts = []
    for index, texts in enumerate([["Page one"], ["Page two", "and three lines"]]):
        data = synthetic.pdf_pages([_scanned_page(texts, (300, 200))])
        parts.append(_write(tmp_path, data, [_page_result(1, 600, 400, texts)], f"{index}.pdf"))

    # WHEN they are concatenated
    out = tmp_path / "result.pdf"
    with out.open("wb") as file:
        count = concatenate_pdfs([part.open("rb") for part in parts], file)

    # THEN the result has both parts' pages, in order, with their text
    assert count == 2
    assert [page.width for page in read_pages(out)] == [300, 300]
    assert pdf_text(out, 1).split() == ["Page", "one"]
    assert pdf_text(out, 2).split() == ["Page", "two", "and", "three", "lines"]


def test_a_layout_page_without_lines_gets_its_blocks_text(tmp_path: Path) -> None:
    # GIVEN a page recognized as layout blocks only (as PaddleOCR-VL returns it), one of them a
    # two-line paragraph
    data = synthetic.encode(_scanned_page([], (800, 400)), "PNG")
    blocks = [
        Block(type="title", box=_box(80, 40, 560, 90), text="Quarterly report"),
        Block(type="text", box=_box(80, 150, 720, 270), text="Revenue grew by 12 percent\nin Q3"),
    ]
    result = PageResult(page=1, width=800, height=400, blocks=blocks)

    # WHEN its searchable PDF is written
    out = _write(tmp_path, data, [result])

    # THEN the blocks' text is extracted in order, each word inside its block
    (page,) = read_pages(out)
    assert pdf_text(out).split() == [
        "Quarterly",
        "report",
        "Revenue",
        "grew",
        "by",
        "12",
        "percent",
        "in",
        "Q3",
    ]
    for word in page.words:
        assert any(
            block.box[0][0] - 1 <= word.box[0] <= word.box[2] <= block.box[1][0] + 1
            and block.box[0][1] - 1 <= word.box[1] <= word.box[3] <= block.box[2][1] + 1
            for block in blocks
        ), word
