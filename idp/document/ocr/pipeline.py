"""Document bytes → OCR'd pages: decode, rasterize page by page, recognize, time each stage.

Shared by the CPU processor Lambda and the VL container server; it knows nothing about S3,
DynamoDB or HTTP. Errors a user's file can cause surface as JobErrors from idp.document.decode,
engine failures as EngineFailure.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from idp.contract import names
from idp.contract.jobs import JobOptions
from idp.contract.names import MediaType
from idp.contract.results import PageResult, SourceInfo
from idp.document.decode import Document, PageImage, open_document
from idp.document.ocr.engine import MultiPageEngine, OcrEngine
from idp.document.ocr.page import Reader, read_pages
from idp.document.ocr.timings import measuring
from idp.document.text_layer.page import LayerReader, PageReader


@dataclass
class DocumentOcr:
    """The outcome of `ocr_document`: pages in order plus facts about the input."""

    pages: list[PageResult]
    media_type: MediaType
    page_count: int
    sha256: str
    size_bytes: int
    # Stage → milliseconds: "open" (detect + parse), "rasterize" and "ocr" (summed over pages);
    # "orientation", when it ran, is the part of "ocr" spent finding which way up pages are;
    # "retry", when it ran, the second reads of doubtful pages (rendering and OCR).
    timings_ms: dict[str, float] = field(default_factory=dict)

    def source(self, *, bucket: str, key: str) -> SourceInfo:
        return SourceInfo(
            bucket=bucket,
            key=key,
            sha256=self.sha256,
            media_type=self.media_type.value,
            page_count=self.page_count,
            size_bytes=self.size_bytes,
        )


def ocr_document(
    data: bytes,
    *,
    engine: OcrEngine | Reader,
    options: JobOptions,
    max_pages: int = names.DEFAULT_MAX_PAGES,
    page_batch: int = 1,
    first_page: int = 1,
    last_page: int | None = None,
    page_offset: int = 0,
    on_pages_done: Callable[[int], None] | None = None,
    read_page: PageReader | None = None,
    page_layer: LayerReader | None = None,
) -> DocumentOcr:
    """OCR every page of a PDF/PNG/JPEG/TIFF/BMP/WEBP document, each page read step by step by
    idp.document.ocr.page (verdict and second read included). A bare engine reads pages as
    uploaded; a Reader from the registry checks their orientation too.

    Pages are rasterized lazily (a PDF page at the scale its content asks for, never below
    `options.pdf_scale`: idp.document.render_scale), so at most `page_batch` page images are
    held at a time; an engine that takes several pages at once (MultiPageEngine) gets them
    `page_batch` at a time so their work overlaps. Raises the JobError subclasses of
    idp.contract.errors for unusable input (EMPTY_INPUT, UNSUPPORTED_MEDIA_TYPE,
    CORRUPT_DOCUMENT, ENCRYPTED_DOCUMENT, NO_PAGES, TOO_MANY_PAGES, IMAGE_TOO_LARGE) and
    EngineFailure when the engine fails on a page.

    A chunk of a larger document OCRs pages `first_page`..`last_page` only; when `data` is the
    chunk's own PDF, `page_offset` numbers its pages as in the whole document. `on_pages_done`
    hears how many pages are done after each batch (progress).

    `read_page` (idp.document.text_layer.page.page_reader) sees each PDF page first: a page it
    returns is taken as it is (read from the text layer, never rasterized at full size nor
    OCR'd); a page it declines (None) is OCR'd. Pages stay in document order either way.
    `page_layer` (text_layer.page.layer_reader, for a layout model) gives a rendered PDF page
    its text layer and rulings where the layer covers it, for the page path to read it from.
    """
    reader = engine if isinstance(engine, Reader) else Reader(engine)
    sha256 = hashlib.sha256(data).hexdigest()
    started = time.perf_counter()
    seconds = {"rasterize": 0.0, "ocr": 0.0, "text_layer": 0.0, "retry": 0.0}
    orientation_ms = 0.0
    pages: list[PageResult] = []
    several = reader.orientation is None and isinstance(reader.engine, MultiPageEngine)
    batch_size = page_batch if several else 1
    batch: list[PageImage] = []

    def recognize_batch() -> None:
        nonlocal orientation_ms
        if not batch:
            return
        done = read_pages(reader, batch, document.render_again)
        seconds["ocr"] += done.ocr_s
        seconds["retry"] += done.retry_s
        orientation_ms += done.orientation_ms
        pages.extend(done.pages)
        batch.clear()  # let the pages' pixels go before the next ones are rendered
        if on_pages_done is not None:
            on_pages_done(len(pages))

    with (
        measuring() as steps,
        open_document(
            data, pdf_scale=options.pdf_scale, max_pages=max_pages, page_offset=page_offset
        ) as document,
    ):
        open_s = time.perf_counter() - started
        stop = document.page_count if last_page is None else min(last_page, document.page_count)
        layer_reader = read_page if document.media_type is MediaType.PDF else None
        for number in range(max(first_page, 1), stop + 1):
            if layer_reader is not None:
                tick = time.perf_counter()
                with document.pdf_page(number) as pdf_page:
                    page = layer_reader(pdf_page, document.page_number(number))
                seconds["text_layer"] += time.perf_counter() - tick
                if page is not None:
                    recognize_batch()  # pages before it first: order is kept
                    pages.append(page)
                    if on_pages_done is not None:
                        on_pages_done(len(pages))
                    continue
            batch.append(_page_image(document, number, page_layer, seconds))
            if len(batch) >= max(1, batch_size):
                recognize_batch()
        recognize_batch()
        facts = document.facts
    timings = {"open": open_s, **seconds}
    if read_page is None and page_layer is None:
        del timings["text_layer"]
    if orientation_ms:
        timings["orientation"] = orientation_ms / 1000
    return DocumentOcr(
        pages=pages,
        media_type=facts.media_type,
        page_count=facts.page_count,
        sha256=sha256,
        size_bytes=len(data),
        timings_ms={
            **{
                stage: round(value * 1000, 1)
                for stage, value in timings.items()
                if value or stage != "retry"  # "retry" only where a page was read again
            },
            # Each step's own share of "ocr" and "retry" (idp.document.ocr.timings).
            **{f"step.{name}": round(value * 1000, 1) for name, value in sorted(steps.items())},
        },
    )


def _page_image(
    document: Document, number: int, page_layer: LayerReader | None, seconds: dict[str, float]
) -> PageImage:
    """The page's image; a PDF page's with its layer where `page_layer` gives one. What each
    costs is added to `seconds`."""
    tick = time.perf_counter()
    image = document.page_image(number)
    seconds["rasterize"] += time.perf_counter() - tick
    if page_layer is not None and image.render is not None:
        tick = time.perf_counter()
        with document.pdf_page(number) as pdf_page:
            image = replace(image, layer=page_layer(pdf_page, image.render.scale))
        seconds["text_layer"] += time.perf_counter() - tick
    return image
