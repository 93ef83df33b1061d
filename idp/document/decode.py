"""Decode an input document into page images: media type by magic bytes, then rasterize.

Every way a user's file can be unusable ends here as a typed JobError (empty, unsupported,
corrupt, encrypted, no pages, too many pages, too large), before any OCR work is spent on it.
Pages are produced one at a time so a long document never holds more than one page in memory.
A PDF page is rendered at a scale chosen from its content (idp.document.render_scale).
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageOps, UnidentifiedImageError

from idp.contract import names
from idp.contract.env.functions import Env
from idp.contract.errors import (
    CorruptDocument,
    EncryptedDocument,
    ImageTooLarge,
    NoPages,
    TooManyPages,
    UnsupportedMediaType,
)
from idp.contract.lifetime import Closing
from idp.contract.names import MediaType
from idp.contract.results import RenderInfo
from idp.document import render_scale
from idp.document.budgets import ImageBudgets, budgets

if TYPE_CHECKING:
    from idp.document.text_layer.page import PageLayer
from idp.document.ink import page_ink, text_line_height
from idp.document.media_types import detect_media_type

__all__ = ["Document", "DocumentFacts", "PageImage", "detect_media_type", "open_document"]

# A PDF's end-of-file marker may be followed by a little trailing junk.
_PDF_TRAILER_WINDOW: Final = 4096

_PDF_ENCRYPT_RE: Final = re.compile(rb"/Encrypt\s*(?:\d+\s+\d+\s+R|<<)")
_PDF_EMPTY_TREE_RE: Final = re.compile(rb"/Count\s+0(?![\d.])")
_PDF_PAGES_RE: Final = re.compile(rb"/Count\s+[1-9]")

_DECODE_ERRORS: Final = (
    OSError,
    ValueError,
    SyntaxError,
    EOFError,
    IndexError,
    KeyError,
    TypeError,
    Image.DecompressionBombError,
)


@dataclass(frozen=True)
class PageImage:
    """One rasterized page: RGB uint8 pixels (H×W×3), 1-based page number."""

    page: int
    pixels: npt.NDArray[np.uint8]
    render: RenderInfo | None = None  # how a PDF page was rasterized; None for raster images
    # A born-digital page's text layer and rulings at the render's scale, where a layout job
    # reads its text from the PDF (idp.document.text_layer.page.page_layer).
    layer: PageLayer | None = None

    @property
    def width(self) -> int:
        return int(self.pixels.shape[1])

    @property
    def height(self) -> int:
        return int(self.pixels.shape[0])


@dataclass(frozen=True)
class DocumentFacts:
    """What was learned about the input before any page is rendered."""

    media_type: MediaType
    page_count: int


class Document(Closing):
    """An opened input document whose pages are rasterized lazily, one at a time.

    Use as a context manager; `pages()` yields RGB PageImages with 1-based page numbers.
    """

    def __init__(
        self,
        data: bytes,
        *,
        pdf_scale: float = names.DEFAULT_PDF_SCALE,
        max_pages: int = names.DEFAULT_MAX_PAGES,
        max_pixels: int | None = None,
        page_offset: int = 0,
        limits: ImageBudgets | None = None,
    ) -> None:
        self.media_type = detect_media_type(data)
        if self.media_type.is_office:
            # Its pages are its conversion to PDF (the converter function's), never its bytes.
            raise UnsupportedMediaType(
                f"a {self.media_type.label} document is read from its conversion to PDF"
            )
        self._data = data
        # A chunk's own PDF holds pages first..last of a larger document: its page 1 is page
        # `page_offset + 1` there, and pages and errors are numbered as in that document.
        self._page_offset = page_offset
        self._pdf_scale = pdf_scale
        # What a page may be (idp.document.budgets): this function's, or `max_pixels` a page.
        self._limits = limits or budgets()
        if max_pixels is not None:
            self._limits = replace(self._limits, page_pixels=max_pixels)
        self._max_pixels = self._limits.page_pixels
        self._pdf: Any = None  # pypdfium2.PdfDocument (the package ships no type hints)
        self._image: Image.Image | None = None
        try:
            if self.media_type is MediaType.PDF:
                self.page_count = self._open_pdf()
            else:
                self.page_count = self._open_image()
        except BaseException:
            self.close()
            raise
        if self.page_count < 1:
            self.close()
            raise NoPages(f"the {_label(self.media_type)} has no pages")
        if self.page_count > max_pages:
            self.close()
            raise TooManyPages(
                f"the {_label(self.media_type)} has {self.page_count} pages; "
                f"the limit is {max_pages} (setting {Env.MAX_PAGES.value})"
            )

    @property
    def facts(self) -> DocumentFacts:
        return DocumentFacts(media_type=self.media_type, page_count=self.page_count)

    def pages(self, first: int = 1, last: int | None = None) -> Iterator[PageImage]:
        """Yield pages `first`..`last` (1-based, inclusive; default all) as RGB pixels, in
        order; only the current page is held."""
        stop = self.page_count if last is None else min(last, self.page_count)
        for index in range(max(first, 1) - 1, stop):
            yield self.page_image(index + 1)

    def page_image(self, number: int) -> PageImage:
        """Page `number` (1-based, of this file) as RGB pixels; a PDF page at the scale its
        content asks for (PageImage.render says which, and why)."""
        index = number - 1
        if self._pdf is None:
            return PageImage(page=self.page_number(number), pixels=self._decode_image_frame(index))
        pixels, render = self._render_pdf_page(index)
        return PageImage(page=self.page_number(number), pixels=pixels, render=render)

    def render_again(self, image: PageImage, *, scale: float, reason: str) -> PageImage:
        """`image`'s PDF page rendered once more at `scale` (a second read of a doubtful page);
        its RenderInfo keeps the scan's dpi and says `reason`. TypeError for a raster image."""
        if image.render is None or self._pdf is None:
            raise TypeError(f"page {image.page} is not a rendered PDF page")
        render = RenderInfo(scale=scale, reason=reason, scan_dpi=image.render.scan_dpi)
        page = self._load_pdf_page(image.page - self._page_offset - 1)
        try:
            width_pt, height_pt = page.get_size()
            size = math.ceil(width_pt * scale), math.ceil(height_pt * scale)
            self._check_pixels(*size, f"PDF page {image.page} rendered at {scale}×")
            pixels = self._rasterize(page, scale, image.page)
        finally:
            page.close()
        return PageImage(page=image.page, pixels=pixels, render=render)

    def page_number(self, number: int) -> int:
        """Page `number` of this file as numbered in the whole document (a chunk's offset)."""
        return self._page_offset + number

    @contextlib.contextmanager
    def pdf_page(self, number: int) -> Iterator[Any]:
        """Page `number` (1-based, of this file) as a pypdfium2 PdfPage, closed on exit."""
        page = self._load_pdf_page(number - 1)
        try:
            # A page read from its layer is held to the same size limit as a rendered one.
            self._rendered_size(page, self.page_number(number))
            yield page
        finally:
            page.close()

    def extract_pdf_pages(self, first: int, last: int) -> bytes:
        """A new PDF of pages `first`..`last` (1-based, inclusive), copied without rendering."""
        pdfium = _pdfium()

        pdf = self._opened_pdf()
        part = pdfium.PdfDocument.new()
        try:
            part.import_pages(pdf, pages=list(range(first - 1, last)))
            buffer = io.BytesIO()
            part.save(buffer)
        finally:
            part.close()
        return buffer.getvalue()

    # -- PDF -------------------------------------------------------------------------------------
    def _open_pdf(self) -> int:
        pdfium = _pdfium()

        if b"%%EOF" not in self._data[-_PDF_TRAILER_WINDOW:]:
            raise CorruptDocument(
                "the PDF has no end-of-file marker (%%EOF): the file looks truncated or damaged"
            )
        try:
            pdf = pdfium.PdfDocument(self._data)
        except pdfium.PdfiumError as exc:
            # PDFium's error code can be stale (it is not reset by a failure that sets none,
            # such as an empty page tree), so the file itself decides between the causes.
            if _PDF_ENCRYPT_RE.search(self._data):
                raise EncryptedDocument(
                    "the PDF is encrypted and needs a password to open; upload it unprotected"
                ) from None
            if _PDF_EMPTY_TREE_RE.search(self._data) and not _PDF_PAGES_RE.search(self._data):
                return 0
            raise CorruptDocument(f"the PDF cannot be read: {exc}") from None
        self._pdf = pdf
        # Filled-in form fields render with the page; a form that fails to load is optional.
        with contextlib.suppress(pdfium.PdfiumError):
            pdf.init_forms()
        return len(pdf)

    def _opened_pdf(self) -> Any:
        """The open pypdfium2 PdfDocument; TypeError for an image, or once closed."""
        if self._pdf is None:
            raise TypeError(f"the {_label(self.media_type)} has no open PDF pages")
        return self._pdf

    def _load_pdf_page(self, index: int) -> Any:
        """The PdfPage at 0-based `index` (the caller closes it); CorruptDocument if unloadable."""
        pdf = self._opened_pdf()
        try:
            return pdf[index]
        except _pdfium().PdfiumError as exc:
            number = self.page_number(index + 1)
            raise CorruptDocument(f"PDF page {number} cannot be loaded: {exc}") from None

    def _render_pdf_page(self, index: int) -> tuple[npt.NDArray[np.uint8], RenderInfo]:
        number = self.page_number(index + 1)
        page = self._load_pdf_page(index)
        try:
            # The job's scale decides whether a page may be rendered at all, whatever its content.
            self._rendered_size(page, number)
            budget = min(render_scale.PIXEL_BUDGET, self._max_pixels)
            facts = render_scale.page_facts(page, pixel_budget=budget)
            render = render_scale.choose_scale(facts, self._pdf_scale)
            width_pt, height_pt = page.get_size()
            self._check_pixels(
                math.ceil(width_pt * render.scale),
                math.ceil(height_pt * render.scale),
                f"PDF page {number} rendered at {render.scale:g}×",
            )
            pixels = self._rasterize(page, render.scale, number)
            if render_scale.needs_text_check(facts):
                # A scan says nothing of its text's size until its pixels are seen: measured on
                # this rendering, so the common page is rendered once.
                line_px = text_line_height(page_ink(pixels))
                raised = render_scale.raised_for_small_text(facts, render, line_px)
                if raised is not None:
                    del pixels  # one page in memory at a time
                    render = raised
                    pixels = self._rasterize(page, render.scale, number)
        finally:
            page.close()
        return pixels, render

    def _rasterize(self, page: Any, scale: float, number: int) -> npt.NDArray[np.uint8]:
        pdfium = _pdfium()
        try:
            bitmap = page.render(scale=scale, rev_byteorder=True)
        except (pdfium.PdfiumError, ValueError) as exc:
            raise CorruptDocument(f"PDF page {number} cannot be rendered: {exc}") from None
        try:
            return np.array(bitmap.to_numpy()[:, :, :3], dtype=np.uint8, order="C")
        finally:
            bitmap.close()

    def _rendered_size(self, page: Any, number: int) -> tuple[int, int]:
        """The page's size rendered at the job's scale; CorruptDocument / ImageTooLarge."""
        width_pt, height_pt = page.get_size()
        width = math.ceil(width_pt * self._pdf_scale)
        height = math.ceil(height_pt * self._pdf_scale)
        if width < 1 or height < 1:
            raise CorruptDocument(f"PDF page {number} has an empty page box")
        # Its shape is checked at the scale it is rendered at (a page read from its text layer
        # is never rendered).
        what = f"PDF page {number} rendered at {self._pdf_scale}×"
        self._check_pixels(width, height, what, shape=False)
        return width, height

    # -- raster images -------------------------------------------------------------------------
    def _open_image(self) -> int:
        image = self._open_pil()
        self._image = image
        self._check_pixels(image.width, image.height, _label(self.media_type))
        if self.media_type is MediaType.TIFF:
            try:
                return int(getattr(image, "n_frames", 1))
            except _DECODE_ERRORS as exc:
                raise CorruptDocument(f"the TIFF page directory cannot be read: {exc}") from None
        # Animated PNG/WEBP frames are animation, not pages: only the first one is a page.
        return 1

    def _open_pil(self) -> Image.Image:
        """Open without decoding pixels: only the header is read, so a bomb costs nothing."""
        if self.media_type is MediaType.HEIF:
            _register_heif()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                return Image.open(io.BytesIO(self._data), formats=[_PIL_FORMATS[self.media_type]])
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            raise ImageTooLarge(self._bomb_message(_label(self.media_type))) from None
        except UnidentifiedImageError:
            raise CorruptDocument(
                f"the file starts like a {_label(self.media_type)} but cannot be decoded"
            ) from None
        except _DECODE_ERRORS as exc:
            raise CorruptDocument(
                f"the {_label(self.media_type)} header cannot be read: {exc}"
            ) from None

    def _decode_image_frame(self, index: int) -> npt.NDArray[np.uint8]:
        image = self._image
        if image is None:
            raise TypeError(f"the {_label(self.media_type)} has no open image")
        label = _label(self.media_type)
        number = self._page_offset + index + 1
        where = f"{label} page {number}" if self.page_count > 1 or number > 1 else label
        try:
            if index:
                image.seek(index)
            # Frames of a TIFF may differ in size: check each before decoding it.
            self._check_pixels(image.width, image.height, where)
            with warnings.catch_warnings():
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                image.load()
                # Transposing copies the page: only pay for it when EXIF asks for a rotation.
                upright = (
                    ImageOps.exif_transpose(image)
                    if image.getexif().get(_EXIF_ORIENTATION, 1) != 1
                    else image
                )
                rgb = _to_rgb(upright)
            return np.array(rgb, dtype=np.uint8)  # one writable, C-ordered copy
        except ImageTooLarge:
            raise
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            raise ImageTooLarge(self._bomb_message(where)) from None
        except _DECODE_ERRORS as exc:
            raise CorruptDocument(
                f"the {where} cannot be decoded (truncated or damaged): {exc}"
            ) from None

    def _bomb_message(self, what: str) -> str:
        # Pillow's own text quotes its limit, not ours: say what the pipeline accepts.
        return (
            f"the {what} is too large to decode safely: it declares more pixels than the "
            f"{self._max_pixels / 1e6:.0f} MP a page may have (a possible decompression bomb)"
        )

    def _check_pixels(self, width: int, height: int, what: str, *, shape: bool = True) -> None:
        """ImageTooLarge for a page that may not be decoded at this size; UnsupportedShape for
        one that could hold no readable line (`shape`: pixels that will be OCR'd)."""
        self._limits.check_pixels(width, height, what)
        if shape:
            self._limits.check_shape(width, height, what)

    # -- lifetime ----------------------------------------------------------------------------------
    def close(self) -> None:
        if self._pdf is not None:
            self._pdf.close()
            self._pdf = None
        if self._image is not None:
            self._image.close()
            self._image = None


# Open bytes as a document: raises the JobError that says why they cannot be used.
open_document = Document


_PIL_FORMATS: Final[dict[MediaType, str]] = {
    MediaType.PNG: "PNG",
    MediaType.JPEG: "JPEG",
    MediaType.TIFF: "TIFF",
    MediaType.BMP: "BMP",
    MediaType.WEBP: "WEBP",
    MediaType.HEIF: "HEIF",  # pi-heif's plugin (libheif, decode only): _register_heif
    MediaType.AVIF: "AVIF",  # Pillow's own (libavif)
}

_LABELS: Final[dict[MediaType, str]] = {
    MediaType.PDF: "PDF",
    MediaType.PNG: "PNG image",
    MediaType.JPEG: "JPEG image",
    MediaType.TIFF: "TIFF image",
    MediaType.BMP: "BMP image",
    MediaType.WEBP: "WEBP image",
    MediaType.HEIF: "HEIC/HEIF image",
    MediaType.AVIF: "AVIF image",
}


def _register_heif() -> None:
    """Pillow reads HEIF through pi-heif's plugin (libheif with the libde265 decoder, no
    encoder). libheif applies the image's rotation and mirroring as it decodes, and the
    plugin then resets the EXIF orientation, so a photo is upright once, never twice."""
    from pi_heif import register_heif_opener  # type: ignore[import-untyped]

    register_heif_opener()


def _pdfium() -> Any:
    import pypdfium2  # type: ignore[import-untyped]

    return pypdfium2


def _label(media_type: MediaType) -> str:
    return _LABELS.get(media_type, f"{media_type.label} document")


_EXIF_ORIENTATION: Final = 0x0112


def _to_rgb(image: Image.Image) -> Image.Image:
    """RGB with transparency flattened onto white (a transparent scan is white paper)."""
    has_alpha = image.mode in ("RGBA", "LA", "PA") or (
        image.mode == "P" and "transparency" in image.info
    )
    if has_alpha:
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    if image.mode in ("I;16", "I;16B", "I;16L", "I"):
        # 16-bit grey: scale to 8 bits rather than clip.
        array = np.asarray(image, dtype=np.uint32)
        peak = int(array.max()) or 1
        grey = (array * 255 // max(peak, 255)).astype(np.uint8)
        return Image.fromarray(grey).convert("RGB")
    if image.mode != "RGB":
        return image.convert("RGB")
    return image
