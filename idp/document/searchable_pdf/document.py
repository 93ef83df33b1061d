"""A searchable PDF: the input's pages unchanged, each with its recognized text invisibly on top.

PDF input: each page is copied as stored (its content streams and images are never decoded or
re-encoded) and the text layer is appended as one more content stream, unless the page has text
of its own (a born-digital page, whose text a second copy would only duplicate). Image input
(PNG, JPEG, TIFF frames, BMP, WEBP): each frame becomes a page holding the image, JPEG passed
through as is (DCTDecode) and anything else compressed losslessly (Flate). Pages are written one
at a time to the output file, so a document of any length costs the memory of one page.

A page that was read turned (PageResult.rotation) is shown upright, as OCRmyPDF's --rotate-pages
does: its /Rotate turns it when displayed, its pixels and the text layer's place on them stay as
they are, so viewers show it and text extractors read it the right way up.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Iterable, Sequence
from typing import IO, Final

import pypdfium2  # type: ignore[import-untyped]
from PIL import Image, ImageOps
from pypdf import PageObject, PdfReader
from pypdf.generic import DictionaryObject

from idp.contract.names import MediaType
from idp.contract.results import PageResult
from idp.document.decode import detect_media_type
from idp.document.searchable_pdf.text_layer import FONT_RESOURCE, PageGeometry, text_layer
from idp.document.searchable_pdf.writer import PdfObjectCopier, PdfStreamWriter, number

_DEFAULT_DPI: Final = 72.0  # an image that states no resolution: one pixel per point
# A stated resolution outside these is a placeholder (TIFF writers often put 1), not a scan's.
_MIN_DPI: Final = 36.0
_MAX_DPI: Final = 4800.0
_EXIF_ORIENTATION: Final = 0x0112
_IMAGE_NAME: Final = "IdpPage"


def write_searchable_pdf(
    data: bytes, pages: Sequence[PageResult], out: IO[bytes], *, first_page: int = 1
) -> int:
    """Write the searchable PDF of `data`'s pages `first_page`.. (one per entry of `pages`,
    whose boxes are in that page's rendered pixel space) to `out`; returns the page count."""
    writer = PdfStreamWriter(out)
    if detect_media_type(data) is MediaType.PDF:
        _write_pdf_pages(writer, data, pages, first_page)
    else:
        _write_image_pages(writer, data, pages, first_page)
    writer.close()
    return writer.page_count


def concatenate_pdfs(parts: Iterable[IO[bytes]], out: IO[bytes]) -> int:
    """Write the pages of `parts`, in order, as one PDF to `out`; returns the page count.

    Parts are read one at a time (each is held only while its pages are copied), so merging the
    parts of a long document costs the memory of its largest part.
    """
    writer = PdfStreamWriter(out)
    for part in parts:
        reader = PdfReader(part)
        copier = PdfObjectCopier(writer)
        for page in reader.pages:
            writer.add_page(copier.page_entries(page))
            copier.flush()
            _forget_read_objects(reader)
    writer.close()
    return writer.page_count


# -- PDF input ---------------------------------------------------------------------------------
def _write_pdf_pages(
    writer: PdfStreamWriter, data: bytes, pages: Sequence[PageResult], first_page: int
) -> None:
    reader = PdfReader(io.BytesIO(data))
    copier = PdfObjectCopier(writer)
    for offset, result in enumerate(pages):
        index = first_page - 1 + offset
        page = reader.pages[index]
        if _has_own_text(data, index, result):
            writer.add_page(_upright_entries(copier, page, result))
        else:
            _write_pdf_page(writer, copier, page, result)
        copier.flush()
        _forget_read_objects(reader)


def _forget_read_objects(reader: PdfReader) -> None:
    """Drop pypdf's cache of the objects read so far: a page's images, once written, are not
    needed again (a shared object read again is still written once: the copier numbers it by
    its reference). Without this the reader holds every page's images until it is done."""
    reader.resolved_objects.clear()


def _has_own_text(data: bytes, index: int, result: PageResult) -> bool:
    """Whether the page already carries at least half the text the OCR read on it.

    The document is opened for this one page (parsing its cross-reference table costs about a
    millisecond): PDFium keeps the streams a page loaded for as long as the document is open,
    so one document held across the pages would end up holding every page's images.
    """
    texts = [line.text for line in result.lines] or [block.text or "" for block in result.blocks]
    recognized = sum(len("".join(text.split())) for text in texts)
    with pypdfium2.PdfDocument(io.BytesIO(data)) as rendered:  # read in place, not copied
        page = rendered[index]
        text_page = page.get_textpage()
        own = len("".join(text_page.get_text_range().split()))
        text_page.close()
        page.close()
    return own > 0 and own * 2 >= recognized


def _write_pdf_page(
    writer: PdfStreamWriter, copier: PdfObjectCopier, page: PageObject, result: PageResult
) -> None:
    crop = page.cropbox
    box = (float(crop.left), float(crop.bottom), float(crop.right), float(crop.top))
    rotate = page.rotation % 360
    width, height = box[2] - box[0], box[3] - box[1]
    if rotate in (90, 270):
        width, height = height, width
    layer = text_layer(result, PageGeometry(width, height, box, rotate))
    if not layer:
        writer.add_page(_upright_entries(copier, page, result))
        return
    save, restore = writer.graphics_state_brackets()
    contents = page.get("/Contents")
    if contents is None:
        own = b""
    elif isinstance(contents.get_object(), DictionaryObject):  # one stream
        own = copier.serialize(contents)
    else:  # an array of streams (itself possibly indirect): its items
        own = copier.serialize(contents.get_object())[1:-1]
    overlay = writer.add_stream(b"/Filter /FlateDecode", zlib.compress(layer))
    entries = _upright_entries(copier, page, result, skip=frozenset({"/Contents", "/Resources"}))
    resources = _resources_with_font(copier, page, writer.text_font())
    writer.add_page(
        entries
        + b" /Resources "
        + resources
        + b" /Contents [%d 0 R " % save
        + own
        + b" %d 0 R %d 0 R]" % (restore, overlay)
    )


def _shown_rotation(rotate: int, result: PageResult) -> int:
    """The page's /Rotate that shows it upright: the page as rendered was read turned
    `result.rotation` degrees counter-clockwise, and /Rotate turns clockwise."""
    return (rotate - result.rotation) % 360


def _upright_entries(
    copier: PdfObjectCopier,
    page: PageObject,
    result: PageResult,
    *,
    skip: frozenset[str] = frozenset(),
) -> bytes:
    """The page's own entries less `skip`, with the /Rotate that shows it upright."""
    entries = copier.page_entries(page, skip=skip | {"/Rotate"})
    shown = _shown_rotation(page.rotation % 360, result)
    return entries + (b" /Rotate %d" % shown if shown else b"")


def _resources_with_font(copier: PdfObjectCopier, page: PageObject, text_font: int) -> bytes:
    """The page's resources with the text layer's font added to its fonts."""
    resources = page.get("/Resources")
    own = resources.get_object() if resources is not None else DictionaryObject()
    entries = [
        copier.serialize(key) + b" " + copier.serialize(value)
        for key, value in own.items()
        if key != "/Font"
    ]
    fonts = own.get("/Font")
    font_entries = [
        copier.serialize(key) + b" " + copier.serialize(value)
        for key, value in (fonts.get_object().items() if fonts is not None else [])
    ]
    font_entries.append(b"/%s %d 0 R" % (FONT_RESOURCE.encode(), text_font))
    entries.append(b"/Font << " + b" ".join(font_entries) + b" >>")
    return b"<< " + b" ".join(entries) + b" >>"


# -- image input -------------------------------------------------------------------------------
def _write_image_pages(
    writer: PdfStreamWriter, data: bytes, pages: Sequence[PageResult], first_page: int
) -> None:
    with Image.open(io.BytesIO(data)) as image:
        for offset, result in enumerate(pages):
            if first_page - 1 + offset:
                image.seek(first_page - 1 + offset)
            _write_image_page(writer, data, image, result)


def _write_image_page(
    writer: PdfStreamWriter, data: bytes, image: Image.Image, result: PageResult
) -> None:
    upright = image.getexif().get(_EXIF_ORIENTATION, 1) in (0, 1)
    if image.format == "JPEG" and upright and image.mode in ("RGB", "L"):
        # The JPEG as uploaded: a viewer decodes exactly the pixels the OCR saw.
        space = "DeviceRGB" if image.mode == "RGB" else "DeviceGray"
        xobject = writer.add_stream(
            f"/Type /XObject /Subtype /Image /Width {image.width} /Height {image.height} "
            f"/ColorSpace /{space} /BitsPerComponent 8 /Filter /DCTDecode".encode(),
            data,
        )
        pixel_width, pixel_height = image.width, image.height
    else:
        frame = image if upright else ImageOps.exif_transpose(image)
        frame = _lossless_mode(frame)
        space, bits = ("DeviceRGB", 8) if frame.mode == "RGB" else ("DeviceGray", 8)
        if frame.mode == "1":
            bits = 1  # PIL packs 1-bit rows as PDF does, 0 is black
        xobject = writer.add_stream(
            f"/Type /XObject /Subtype /Image /Width {frame.width} /Height {frame.height} "
            f"/ColorSpace /{space} /BitsPerComponent {bits} /Filter /FlateDecode".encode(),
            zlib.compress(frame.tobytes(), 6),
        )
        pixel_width, pixel_height = frame.width, frame.height
    dpi_x, dpi_y = _dpi(image)
    width, height = pixel_width * 72.0 / dpi_x, pixel_height * 72.0 / dpi_y
    layer = text_layer(result, PageGeometry(width, height, (0, 0, width, height)))
    content = f"q {number(width)} 0 0 {number(height)} 0 0 cm /{_IMAGE_NAME} Do Q\n".encode()
    stream = writer.add_stream(b"/Filter /FlateDecode", zlib.compress(content + layer))
    shown = _shown_rotation(0, result)
    writer.add_page(
        f"/MediaBox [0 0 {number(width)} {number(height)}] "
        f"/Resources << /XObject << /{_IMAGE_NAME} {xobject} 0 R >> "
        f"/Font << /{FONT_RESOURCE} {writer.text_font()} 0 R >> >> "
        f"/Contents {stream} 0 R{f' /Rotate {shown}' if shown else ''}".encode()
    )


def _lossless_mode(frame: Image.Image) -> Image.Image:
    """Bilevel, grey and RGB frames as they are; others as RGB, transparency over white."""
    if frame.mode in ("1", "L", "RGB"):
        return frame
    if frame.mode in ("RGBA", "LA", "PA") or (frame.mode == "P" and "transparency" in frame.info):
        rgba = frame.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    if frame.mode.startswith("I"):
        return frame.point(lambda value: value / 256).convert("L")  # 16-bit grey to 8 bits
    return frame.convert("RGB")


def _dpi(image: Image.Image) -> tuple[float, float]:
    dpi = image.info.get("dpi")
    try:
        x, y = float(dpi[0]), float(dpi[1])  # type: ignore[index]
    except (TypeError, ValueError, IndexError):
        return _DEFAULT_DPI, _DEFAULT_DPI
    if not (_MIN_DPI <= x <= _MAX_DPI and _MIN_DPI <= y <= _MAX_DPI):
        return _DEFAULT_DPI, _DEFAULT_DPI
    # PNG states pixels per metre: 150 dpi comes back as 150.0114.
    return _whole_if_close(x), _whole_if_close(y)


def _whole_if_close(dpi: float) -> float:
    return float(round(dpi)) if abs(dpi - round(dpi)) < 0.05 else dpi
