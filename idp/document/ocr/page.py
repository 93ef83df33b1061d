"""One page, read step by step; every engine gets every step (`read_pages`):

1. orient: choose the rotation among reads of the page as given, each read (`read_as_given`)
   being recognize (a tall page in tiles) → read upward lines → split stacked lines → read
   missed text → split gutters → index lists → reading order → amount rows;
2. verdict, and a second read where doubtful.

A layout engine's born-digital page (its PDF text layer covers it) is read from the PDF
instead: the engine's layout, the layer's text and tables (steps.born_digital), then the
verdict.

The steps (idp.document.ocr.steps) take what an engine recognized and know nothing of the engine.
An engine that finds a page's layout itself (PP-StructureV3, PaddleOCR-VL: its content has
blocks) keeps its own order; the steps that read line images again run for an engine that can
(LineReader).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial

from idp.contract.results import EngineInfo, PageQuality, PageResult, TextSource
from idp.document.decode import PageImage
from idp.document.ocr.engine import (
    LayoutEngine,
    LineReader,
    MultiPageEngine,
    OcrEngine,
    PageContent,
    TextDetectorEngine,
)
from idp.document.ocr.steps.born_digital import read_born_digital
from idp.document.ocr.steps.gutters import split_at_gutters
from idp.document.ocr.steps.index_lists import split_index_lists
from idp.document.ocr.steps.missed_text import read_missed_text
from idp.document.ocr.steps.orientation import OrientationModels, read_upright
from idp.document.ocr.steps.quality import (
    assess_page,
    number_floor_for,
    retry_scale,
    second_read_is_better,
)
from idp.document.ocr.steps.reading_order import read_in_order
from idp.document.ocr.steps.rows import join_amount_rows
from idp.document.ocr.steps.stacked_lines import split_stacked_lines
from idp.document.ocr.steps.tiles import read_in_tiles
from idp.document.ocr.steps.upward_lines import read_upward_lines
from idp.document.ocr.timings import step

RenderAgain = Callable[..., PageImage]
"""(image, *, scale, reason) → the same page rendered again at `scale` (Document.render_again)."""


@dataclass(frozen=True)
class Reader:
    """An engine and the steps its pages go through; without orientation models, pages are read
    as uploaded."""

    engine: OcrEngine
    orientation: OrientationModels | None = None

    @property
    def info(self) -> EngineInfo:
        """The engine's facts, its models followed by the orientation models it reads with."""
        info = self.engine.info
        if self.orientation is None:
            return info
        used = [self.orientation.classifier.model_name]
        if self.orientation.lines is not None:
            used.append(self.orientation.lines.model_name)
        return info.model_copy(update={"models": [*info.models, *used]})


@dataclass
class PagesRead:
    """Pages read, with what their steps cost: `ocr_s` the reads (orientation's included),
    `orientation_ms` the part of them spent deciding which way up, `retry_s` the second reads."""

    pages: list[PageResult]
    ocr_s: float
    orientation_ms: float
    retry_s: float


def read_pages(reader: Reader, images: Sequence[PageImage], render_again: RenderAgain) -> PagesRead:
    """The pages, each read step by step (module docstring)."""
    tick = time.perf_counter()
    contents = _read_all(reader, images)  # orient → recognize → … → amount rows
    floor = number_floor_for(reader.engine.info.models)
    done = PagesRead(
        pages=[],
        ocr_s=time.perf_counter() - tick,
        orientation_ms=sum(content.orientation_ms for content in contents),
        retry_s=0.0,
    )
    for image, content in zip(images, contents, strict=True):
        with step("verdict"):
            quality = assess_page(image.pixels, content, image.render, number_floor=floor)
        kept = (image, content, quality)
        # Second read where doubtful (a page read from its PDF has nothing more to give).
        if image.layer is None and retry_scale(image, quality) is not None:
            tick = time.perf_counter()
            kept = _read_again(reader, *kept, render_again)
            done.retry_s += time.perf_counter() - tick
        done.pages.append(_page_result(*kept))
    return done


def _read_all(reader: Reader, images: Sequence[PageImage]) -> list[PageContent]:
    engine = reader.engine
    if reader.orientation is None and isinstance(engine, MultiPageEngine) and len(images) > 1:
        # Several pages in one call, so their work overlaps (the VL engine's regions).
        return [
            _laid_out(content, image)
            for image, content in zip(images, engine.recognize_pages(images), strict=True)
        ]
    return [read_page(reader, image) for image in images]


def read_page(reader: Reader, image: PageImage) -> PageContent:
    """One page read upright (where the reader checks orientation), every box on the page as
    uploaded: orientation reads the page as given at the rotations it weighs, and keeps one. A
    born-digital page of a layout job takes its text from its PDF instead (steps.born_digital):
    its layer is upright as the page is rendered."""
    if image.layer is not None and isinstance(reader.engine, LayoutEngine):
        with step("born_digital"):
            return read_born_digital(image, image.layer, reader.engine)
    read = partial(read_as_given, reader.engine)
    if reader.orientation is None:
        return read(image)
    lines = reader.engine if isinstance(reader.engine, LineReader) else None
    with step("orientation"):  # the reads it weighs count as their own steps
        return read_upright(image, read, reader.orientation, lines)


def read_as_given(engine: OcrEngine, image: PageImage) -> PageContent:
    """One read of the page as it is given, turned or not: recognition and every step after it."""
    content = recognize(engine, image)
    if isinstance(engine, LineReader):  # what PaddleOCR turned, joined or passed over, read again
        with step("upward_lines"):
            content = read_upward_lines(content, image, engine)
        with step("stacked_lines"):
            content = split_stacked_lines(content, image, engine)
        with step("missed_text"):
            content = read_missed_text(content, image, engine)
    return _laid_out(content, image)


def recognize(engine: OcrEngine, image: PageImage) -> PageContent:
    """What the engine recognized on the page; a tall page tile by tile where the engine's text
    detector would shrink its text (steps.tiles). A wrapper that hands pages to an engine calls
    this, so that a tall page reads the same through it."""
    with step("engine"):  # what the engine's own steps (detection, recognition) leave
        if isinstance(engine, TextDetectorEngine):
            return read_in_tiles(image, engine.recognize, engine.detector_side)
        return engine.recognize(image)


def _laid_out(content: PageContent, image: PageImage) -> PageContent:
    """A text-line engine's lines split where the detector ran across a column gutter, an
    index's page lists spaced, grouped into blocks in reading order (PaddleOCR sorts lines by y
    alone, which reads straight across columns), and a row that ends in an amount joined as one
    line; a layout engine's content as it is."""
    if content.blocks:
        return content
    with step("gutters"):
        lines = split_at_gutters(content.lines)
    with step("index_lists"):
        lines = split_index_lists(lines)
    with step("reading_order"):
        ordered = read_in_order(lines, image.width, image.height)
    with step("amount_rows"):
        return join_amount_rows(replace(content, lines=ordered.lines, blocks=ordered.blocks))


def _read_again(
    reader: Reader,
    image: PageImage,
    content: PageContent,
    quality: PageQuality,
    render_again: RenderAgain,
) -> tuple[PageImage, PageContent, PageQuality]:
    """A doubtful PDF page that more pixels may cure, read once more at the higher scale
    `retry_scale` names; the better of the two reads is kept, and its verdict says that the
    retry happened and which read won."""
    scale = retry_scale(image, quality)
    if scale is None or image.render is None:
        return image, content, quality
    was = image.render.scale
    why = ", ".join(quality.reasons)
    again = render_again(
        image, scale=scale, reason=f"{image.render.reason}; read again at {scale:g}x ({why})"
    )
    second = read_page(reader, again)
    with step("verdict"):
        second_quality = assess_page(
            again.pixels,
            second,
            again.render,
            number_floor=number_floor_for(reader.engine.info.models),
        )
    if second_read_is_better(quality, second_quality):
        retried = f"read again at {scale:g}x (was {was:g}x: {why}); the second read kept"
        return again, second, second_quality.model_copy(update={"retried": retried})
    retried = f"read again at {scale:g}x ({why}); the first read kept"
    return image, content, quality.model_copy(update={"retried": retried})


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
        stages=content.stages,
        text_source=_text_source(content),
    )


def _text_source(content: PageContent) -> TextSource:
    """The page's: the layer's where every block's text came from it, "mixed" where some did."""
    sources = {block.text_source for block in content.blocks if block.text_source is not None}
    if not sources or sources == {"ocr"}:
        return "ocr"
    return "text_layer" if sources == {"text_layer"} else "mixed"
