"""Document decoding: media type by content, rasterization, and every way a file can be unusable."""

from __future__ import annotations

import resource
from collections.abc import Callable

import numpy as np
import pytest
from PIL import Image

from devkit import synthetic
from idp.contract.errors import (
    CorruptDocument,
    EmptyInput,
    EncryptedDocument,
    ImageTooLarge,
    JobError,
    NoPages,
    TooManyPages,
    UnsupportedMediaType,
)
from idp.contract.names import MediaType
from idp.document.decode import open_document
from idp.document.media_types import detect_media_type


def _page(text: str = "Hello page", size: tuple[int, int] = (400, 120)) -> Image.Image:
    return synthetic.render_page([text], size=size, font_size=24, margin=20)


@pytest.mark.parametrize(
    ("fmt", "media_type"),
    [
        ("PNG", MediaType.PNG),
        ("JPEG", MediaType.JPEG),
        ("TIFF", MediaType.TIFF),
        ("BMP", MediaType.BMP),
        ("WEBP", MediaType.WEBP),
        ("PDF", MediaType.PDF),
    ],
)
def test_media_type_is_detected_from_content(fmt: str, media_type: MediaType) -> None:
    # GIVEN a page saved in a supported format
    data = synthetic.encode(_page(), fmt)
    # WHEN its type is detected THEN the content decides
    assert detect_media_type(data) is media_type


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "BMP", "WEBP"])
def test_single_image_becomes_one_rgb_page_of_its_size(fmt: str) -> None:
    # GIVEN a 400×120 image
    data = synthetic.encode(_page(), fmt)
    # WHEN it is opened and rasterized
    with open_document(data) as document:
        pages = list(document.pages())
    # THEN there is one RGB page with the image's pixel size
    assert [p.page for p in pages] == [1]
    assert pages[0].pixels.shape == (120, 400, 3)
    assert pages[0].pixels.dtype == np.uint8


def test_pdf_pages_are_rendered_at_the_requested_scale_with_page_numbers() -> None:
    # GIVEN a 3-page PDF whose pages are 400×120 points
    data = synthetic.pdf_pages([_page(f"Page {n}") for n in (1, 2, 3)])
    # WHEN it is opened at 2× (144 dpi) and at 1×
    with open_document(data, pdf_scale=2.0) as document:
        pages = list(document.pages())
        facts = document.facts
    with open_document(data, pdf_scale=1.0) as document:
        first_at_1x = next(document.pages())
    # THEN each page is 800×240 pixels at 2×, numbered 1..3; half that at 1×
    assert facts.media_type is MediaType.PDF
    assert facts.page_count == 3
    assert [p.page for p in pages] == [1, 2, 3]
    assert all(p.pixels.shape == (240, 800, 3) for p in pages)
    assert first_at_1x.pixels.shape == (120, 400, 3)


def test_multi_page_tiff_yields_each_page() -> None:
    # GIVEN a 2-page TIFF with pages of different sizes
    data = synthetic.encode_pages([_page("one"), _page("two", size=(300, 200))], "TIFF")
    # WHEN it is opened
    with open_document(data) as document:
        pages = list(document.pages())
    # THEN both pages come out in order with their own sizes
    assert [(p.page, p.width, p.height) for p in pages] == [(1, 400, 120), (2, 300, 200)]


def test_pages_are_produced_lazily() -> None:
    # GIVEN a 3-page PDF
    data = synthetic.pdf_pages([_page() for _ in range(3)])
    with open_document(data) as document:
        # WHEN pages are requested THEN an iterator hands them over one at a time
        pages = document.pages()
        first = next(pages)
        assert first.page == 1
        assert next(pages).page == 2


def test_transparent_png_is_flattened_onto_white() -> None:
    # GIVEN a fully transparent RGBA PNG (transparent pixels stored as black)
    image = Image.new("RGBA", (50, 20), (0, 0, 0, 0))
    # WHEN it is rasterized
    with open_document(synthetic.encode(image, "PNG")) as document:
        page = next(document.pages())
    # THEN the page is white paper, not black
    assert int(page.pixels.min()) == 255


BadInput = Callable[[], bytes]


@pytest.mark.parametrize(
    ("make", "error", "message_part"),
    [
        (lambda: b"", EmptyInput, "empty"),
        (synthetic.text_file, UnsupportedMediaType, "plain text"),
        (synthetic.html_file, UnsupportedMediaType, "HTML"),
        (synthetic.gif_image, UnsupportedMediaType, "GIF"),
        (synthetic.zip_archive, UnsupportedMediaType, "ZIP archive that is no Office document"),
        (lambda: b"\x00\x01\x02\x03garbage\xff\xfe", UnsupportedMediaType, "binary"),
        (
            lambda: synthetic.truncated(synthetic.pdf_pages([_page(), _page()])),
            CorruptDocument,
            "truncated",
        ),
        (lambda: b"%PDF-1.7\n garbage that is no PDF body\n%%EOF\n", CorruptDocument, "PDF"),
        (lambda: synthetic.truncated(synthetic.encode(_page(), "PNG")), CorruptDocument, "PNG"),
        (
            lambda: synthetic.truncated(synthetic.encode(_page(), "JPEG"), 0.4),
            CorruptDocument,
            "JPEG",
        ),
        (lambda: b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, CorruptDocument, "PNG"),
        (synthetic.encrypted_pdf, EncryptedDocument, "password"),
        (synthetic.empty_pdf, NoPages, "no pages"),
        (synthetic.bomb_png, ImageTooLarge, "too large"),
        (synthetic.oversized_page_pdf, ImageTooLarge, "28800×28800"),
    ],
    ids=[
        "zero-bytes",
        "text-named-png",
        "html-named-pdf",
        "gif",
        "zip-named-docx",
        "unknown-binary",
        "truncated-pdf",
        "pdf-header-only",
        "truncated-png",
        "truncated-jpeg",
        "png-signature-only",
        "encrypted-pdf",
        "zero-page-pdf",
        "decompression-bomb-png",
        "page-too-large-after-rasterization",
    ],
)
def test_unusable_input_raises_its_own_error(
    make: BadInput, error: type[JobError], message_part: str
) -> None:
    # GIVEN a file that cannot be OCR'd
    data = make()
    # WHEN it is opened and its pages are rasterized
    with pytest.raises(error) as raised, open_document(data) as document:
        list(document.pages())
    # THEN the error has the stable code of its kind and says what is wrong
    assert raised.value.code == error.code
    assert message_part.lower() in raised.value.message.lower()


def test_decompression_bomb_is_refused_without_decoding_it() -> None:
    # GIVEN a 20000×20000 PNG (400 megapixels in ~100 KB)
    data = synthetic.bomb_png()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # WHEN it is opened
    with pytest.raises(ImageTooLarge):
        open_document(data)
    # THEN no pixel buffer was allocated (peak RSS grew by far less than 400 MB)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 100


def test_pixel_limit_applies_below_pillows_own_bomb_threshold() -> None:
    # GIVEN a small image and a pixel limit below its size
    data = synthetic.encode(_page(), "PNG")
    # WHEN it is opened with that limit THEN it is refused by its declared size
    with pytest.raises(ImageTooLarge, match="400×120"):
        open_document(data, max_pixels=40_000)


def test_page_limit_is_enforced_before_rendering() -> None:
    # GIVEN a 3-page PDF and a 2-page limit
    data = synthetic.pdf_pages([_page() for _ in range(3)])
    # WHEN it is opened THEN it is refused, naming its page count and the limit
    with pytest.raises(TooManyPages, match=r"3 pages.*limit is 2"):
        open_document(data, max_pages=2)


def test_tiff_page_limit_counts_frames() -> None:
    data = synthetic.encode_pages([_page(), _page(), _page()], "TIFF")
    with pytest.raises(TooManyPages):
        open_document(data, max_pages=2)


def test_a_photo_with_an_exif_rotation_is_decoded_upright() -> None:
    # GIVEN a 300×100 JPEG whose EXIF says "rotate 90° clockwise to view" (orientation 6)
    image = Image.new("RGB", (300, 100), "white")
    exif = Image.Exif()
    exif[0x0112] = 6
    data = synthetic.encode(image, "JPEG", exif=exif.tobytes())

    # WHEN it is opened as a document
    with open_document(data) as document:
        (page,) = list(document.pages())

    # THEN the page is upright: 100 wide, 300 tall
    assert (page.width, page.height) == (100, 300)
    assert page.pixels.flags.writeable
