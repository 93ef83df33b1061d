"""Document bytes → OCR'd pages: decode, rasterize page by page, recognize, time each stage.

Shared by the CPU processor Lambda and the VL container server; it knows nothing about S3,
DynamoDB or HTTP. Errors a user's file can cause surface as JobErrors from idp.documents,
engine failures as EngineFailure.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

from idp import names
from idp.documents import open_document
from idp.jobs import JobOptions
from idp.names import MediaType
from idp.ocr.engine import OcrEngine
from idp.results import PageResult, SourceInfo


@dataclass
class DocumentOcr:
    """The outcome of `ocr_document`: pages in order plus facts about the input."""

    pages: list[PageResult]
    media_type: MediaType
    page_count: int
    sha256: str
    size_bytes: int
    # Stage → milliseconds: "open" (detect + parse), "rasterize" and "ocr" (summed over pages).
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
) -> DocumentOcr:
    """OCR every page of a PDF/PNG/JPEG/TIFF/BMP/WEBP document with a ready engine.

    Pages are rasterized lazily (PDF at `options.pdf_scale`), so only one page image is held
    at a time. Raises the JobError subclasses of idp.errors for unusable input
    (EMPTY_INPUT, UNSUPPORTED_MEDIA_TYPE, CORRUPT_DOCUMENT, ENCRYPTED_DOCUMENT, NO_PAGES,
    TOO_MANY_PAGES, IMAGE_TOO_LARGE) and EngineFailure when the engine fails on a page.
    """
    sha256 = hashlib.sha256(data).hexdigest()
    started = time.perf_counter()
    rasterize_s = 0.0
    ocr_s = 0.0
    pages: list[PageResult] = []
    with open_document(data, pdf_scale=options.pdf_scale, max_pages=max_pages) as document:
        open_s = time.perf_counter() - started
        page_images = document.pages()
        while True:
            tick = time.perf_counter()
            image = next(page_images, None)
            rasterize_s += time.perf_counter() - tick
            if image is None:
                break
            tick = time.perf_counter()
            content = engine.recognize(image)
            ocr_s += time.perf_counter() - tick
            pages.append(
                PageResult(
                    page=image.page,
                    width=image.width,
                    height=image.height,
                    lines=content.lines,
                    blocks=content.blocks,
                    markdown=content.markdown,
                )
            )
            del image  # let the page's pixels go before the next page is rendered
        facts = document.facts
    return DocumentOcr(
        pages=pages,
        media_type=facts.media_type,
        page_count=facts.page_count,
        sha256=sha256,
        size_bytes=len(data),
        timings_ms={
            "open": round(open_s * 1000, 1),
            "rasterize": round(rasterize_s * 1000, 1),
            "ocr": round(ocr_s * 1000, 1),
        },
    )
