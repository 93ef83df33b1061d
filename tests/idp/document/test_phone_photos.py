"""Phone photos: HEIC/HEIF (what phones save by default) and AVIF are read like any image,
upright as the camera meant, within the same pixel budget, with a clear error when damaged.

Real photos come from pillow-heif's test suite (devkit.phone_photos: pinned, fetched from PyPI);
pages "photographed" into HEIC here are encoded with pillow-heif's x265 encoder (a dev-only
dependency), stored sideways with the rotation to apply, as a phone held sideways stores them.
"""

from __future__ import annotations

import io
import time

import numpy as np
import pillow_heif
import pypdfium2  # type: ignore[import-untyped]
import pytest
from PIL import Image

from devkit.phone_photos import photo_bytes
from devkit.textmetrics import character_error_rate
from idp.contract.errors import CorruptDocument, ImageTooLarge, UnsupportedMediaType
from idp.contract.jobs import JobOptions
from idp.contract.names import MediaType, OcrModel
from idp.document.decode import open_document
from idp.document.media_types import detect_media_type
from idp.document.ocr.pipeline import ocr_document
from idp.document.ocr.registry import EngineRegistry
from tests.paths import REPO_ROOT

LETTER = REPO_ROOT / "samples" / "sample-letter.pdf"
LINES_PER_PAGE = 12  # samples/generate.py
_ORIENTATION = 0x0112
_ROTATE_90_CW = 6  # EXIF: turn the stored image 90° clockwise to show it


def _letter_page(dpi: float = 200) -> tuple[Image.Image, str]:
    """The sample letter's first page (a scan) at `dpi`, and the text it was made from."""
    document = pypdfium2.PdfDocument(str(LETTER))
    try:
        image = document[0].render(scale=dpi / 72).to_pil().convert("RGB")
    finally:
        document.close()
    lines = (REPO_ROOT / "samples" / "sample-letter.txt").read_text(encoding="utf-8").splitlines()
    return image, "\n".join(lines[:LINES_PER_PAGE])


def _stored_sideways(upright: Image.Image, fmt: str) -> bytes:
    """The page as a phone held sideways stores it: turned a quarter, with the turn to undo."""
    sideways = upright.rotate(90, expand=True)  # counter-clockwise
    exif = Image.Exif()
    exif[_ORIENTATION] = _ROTATE_90_CW
    out = io.BytesIO()
    if fmt == "HEIF":
        pillow_heif.from_pillow(sideways).save(out, quality=85, exif=exif.tobytes())
    else:
        sideways.save(out, fmt, quality=85, exif=exif.tobytes())
    return out.getvalue()


def test_heic_and_avif_are_told_apart_by_their_brands_and_video_is_not_a_photo() -> None:
    assert detect_media_type(photo_bytes("iphone-arrow")) is MediaType.HEIF
    page = Image.new("RGB", (64, 32), "white")
    avif = io.BytesIO()
    page.save(avif, "AVIF")
    assert detect_media_type(avif.getvalue()) is MediaType.AVIF
    movie = b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2" + b"\x00" * 64
    with pytest.raises(UnsupportedMediaType, match="an ISO media file"):
        detect_media_type(movie)


def test_an_iphone_photo_is_read_upright() -> None:
    # GIVEN an iPhone 8 Plus HEIC, stored sideways with the rotation to apply
    with open_document(photo_bytes("iphone-arrow")) as document:
        (page,) = list(document.pages())
    # THEN the page is the portrait photo, and the arrow drawn on it points up: its apex (the
    # topmost dark ink) is at the middle of the page's width
    height, width = page.pixels.shape[:2]
    assert (width, height) == (3024, 4032)
    dark = np.argwhere(page.pixels.mean(axis=2) < 60)
    top = dark[dark[:, 0] <= dark[:, 0].min() + 20]
    assert 0.4 * width < float(top[:, 1].mean()) < 0.6 * width
    assert dark[:, 0].min() < 0.2 * height


def test_a_photo_beyond_the_pixel_budget_is_refused_before_it_is_decoded() -> None:
    started = time.perf_counter()
    with pytest.raises(ImageTooLarge, match=r"HEIC/HEIF image .* more pixels than the 80 MP"):
        open_document(photo_bytes("200mp"))
    assert time.perf_counter() - started < 2


def test_a_damaged_heic_is_corrupt() -> None:
    with (
        pytest.raises(CorruptDocument, match="HEIC/HEIF image"),
        open_document(photo_bytes("corrupted")) as document,
    ):
        list(document.pages())


@pytest.mark.ocr
@pytest.mark.parametrize("fmt", ["HEIF", "AVIF"])
def test_a_page_photographed_sideways_reads_upright_and_right(
    fmt: str, registry: EngineRegistry
) -> None:
    # GIVEN the sample letter at 200 dpi, saved as a phone saves a photo taken sideways
    upright, reference = _letter_page()
    data = _stored_sideways(upright, fmt)
    assert detect_media_type(data) is (MediaType.HEIF if fmt == "HEIF" else MediaType.AVIF)
    # WHEN it is read
    engine = registry.get(OcrModel.PP_OCRV5, "en", JobOptions())
    done = ocr_document(data, engine=engine, options=JobOptions())
    # THEN it is read upright, with no rotation left to find, at under 1 % CER
    page = done.pages[0]
    assert page.rotation == 0
    read = "\n".join(line.text for line in page.lines)
    assert character_error_rate(reference, read) <= 0.01
