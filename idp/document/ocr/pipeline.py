"""Document bytes → OCR'd pages: decode, rasterize page by page, recognize, time each stage.

Shared by the CPU processor Lambda and the VL container server; it knows nothing about S3,
DynamoDB or HTTP. Errors a user's file can cause surface as JobErrors from idp.document.decode,
engine failures as EngineFailure.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from idp.contract import names
from idp.contract.jobs import JobOptions
from idp.contract.names import MediaType
from idp.contract.results import PageQuality, PageResult, SourceInfo
from idp.document.decode import Document, PageImage, open_document
from idp.document.ocr.engine import MultiPageEngine, OcrEngine, PageContent
from idp.document.ocr.quality import assess_page, retry_scale, second_read_is_better
from idp.document.text_layer.page import PageReader


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
    engine: OcrEngine,
    options: JobOptions,
    max_pages: int = names.DEFAULT_MAX_PAGES,
    page_batch: int = 1,
    first_page: int = 1,
    last_page: int | None = None,
    page_offset: int = 0,
    on_pages_done: Callable[[int], None] | None = None,
    read_page: PageReader | None = None,
) -> DocumentOcr:
    """OCR every page of a PDF/PNG/JPEG/TIFF/BMP/WEBP document with a ready engine.

    Pages are rasterized lazily (a PDF page at the scale its content asks for, never below
    `options.pdf_scale`: idp.document.render_scale), so at most `page_batch` page
    images are held at a time; an engine that takes several pages at once (MultiPageEngine)
    gets them `page_batch` at a time so their work overlaps. Raises the JobError subclasses of
    idp.contract.errors for unusable input (EMPTY_INPUT, UNSUPPORTED_MEDIA_TYPE, CORRUPT_DOCUMENT,
    ENCRYPTED_DOCUMENT, NO_PAGES, TOO_MANY_PAGES, IMAGE_TOO_LARGE) and EngineFailure when the
    engine fails on a page.

    A chunk of a larger document OCRs pages `first_page`..`last_page` only; when `data` is the
    chunk's own PDF, `page_offset` numbers its pages as in the whole document. `on_pages_done`
    hears how many pages are done after each batch (progress).

    `read_page` (idp.document.text_layer.page.page_reader) sees each PDF page first: a page it
    returns is taken as it is (read from the text layer, never rasterized at full size nor OCR'd); a
    page it declines (None) is OCR'd. Pages stay in document order either way.

    Every OCR'd page gets its quality verdict (idp.document.ocr.quality); a doubtful PDF page
    that more pixels may cure is read once more at a higher scale, and the better read kept.
    """
    sha256 = hashlib.sha256(data).hexdigest()
    started = time.perf_counter()
    seconds = {"rasterize": 0.0, "ocr": 0.0, "text_layer": 0.0, "retry": 0.0}
    orientation_ms = 0.0
    pages: list[PageResult] = []
    batch_size = page_batch if isinstance(engine, MultiPageEngine) else 1
    batch: list[PageImage] = []

    def recognize_batch() -> None:
        nonlocal orientation_ms
        if not batch:
            return
        tick = time.perf_counter()
        if isinstance(engine, MultiPageEngine) and len(batch) > 1:
            contents = engine.recognize_pages(batch)
        else:
            contents = [engine.recognize(image) for image in batch]
        seconds["ocr"] += time.perf_counter() - tick
        orientation_ms += sum(content.orientation_ms for content in contents)
        pages.extend(
            _judged_page(document, engine, image, content, seconds)
            for image, content in zip(batch, contents, strict=True)
        )
        batch.clear()  # let the pages' pixels go before the next ones are rendered
        if on_pages_done is not None:
            on_pages_done(len(pages))

    with open_document(
        data, pdf_scale=options.pdf_scale, max_pages=max_pages, page_offset=page_offset
    ) as document:
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
            tick = time.perf_counter()
            batch.append(document.page_image(number))
            seconds["rasterize"] += time.perf_counter() - tick
            if len(batch) >= max(1, batch_size):
                recognize_batch()
        recognize_batch()
        facts = document.facts
    timings = {"open": open_s, **seconds}
    if read_page is None:
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
            stage: round(value * 1000, 1)
            for stage, value in timings.items()
            if value or stage != "retry"  # "retry" only where a page was read again
        },
    )


def _judged_page(
    document: Document,
    engine: OcrEngine,
    image: PageImage,
    content: PageContent,
    seconds: dict[str, float],
) -> PageResult:
    """The page's result with its quality verdict, after a second read where one is worth it
    (its time added to `seconds["retry"]`)."""
    quality = assess_page(image.pixels, content, image.render)
    if retry_scale(image, quality) is not None:
        tick = time.perf_counter()
        image, content, quality = _read_again(document, engine, image, content, quality)
        seconds["retry"] += time.perf_counter() - tick
    return _page_result(image, content, quality)


def _page_result(image: PageImage, content: PageContent, quality: PageQuality) -> PageResult:
    return PageResult(
        page=image.page,
        width=image.width,
        height=image.height,
        rotation=content.rotation,
        lines=content.lines,
        blocks=content.blocks,
        markdown=content.markdown,
        orientation=content.orientation,
        render=image.render,
        quality=quality,
    )


def _read_again(
    document: Document,
    engine: OcrEngine,
    image: PageImage,
    content: PageContent,
    quality: PageQuality,
) -> tuple[PageImage, PageContent, PageQuality]:
    """A doubtful PDF page read once more at the higher scale `retry_scale` names; the better of
    the two reads is kept, and its verdict says that the retry happened and which read won."""
    scale = retry_scale(image, quality)
    if scale is None or image.render is None:
        return image, content, quality
    was = image.render.scale
    why = ", ".join(quality.reasons)
    again = document.render_again(
        image, scale=scale, reason=f"{image.render.reason}; read again at {scale:g}x ({why})"
    )
    second = engine.recognize(again)
    second_quality = assess_page(again.pixels, second, again.render)
    if second_read_is_better(quality, second_quality):
        retried = f"read again at {scale:g}x (was {was:g}x: {why}); the second read kept"
        return again, second, second_quality.model_copy(update={"retried": retried})
    retried = f"read again at {scale:g}x ({why}); the first read kept"
    return image, content, quality.model_copy(update={"retried": retried})
