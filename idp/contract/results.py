"""The canonical result document (result.json) written for every COMPLETED job."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from idp.contract import names

Point = tuple[float, float]
# Clockwise from the text's top-left corner, in the pixel space of the page as uploaded (or
# rendered): on a page read turned (PageResult.rotation), box[0] → box[1] still runs along
# the text's reading direction, which is then not left to right on the page.
Quad = tuple[Point, Point, Point, Point]
# Degrees a page was turned counter-clockwise to read it upright (PaddleOCR's doc orientation).
Rotation = Literal[0, 90, 180, 270]
# Where a page's text came from: the PDF's own text layer, or OCR of its pixels.
TextSource = Literal["text_layer", "ocr"]


def result_key(job_id: str, name: str = names.RESULT_JSON) -> str:
    """results/<job_id>/<name>: where a job's result files live in the results bucket."""
    return f"{names.RESULTS_PREFIX}{job_id}/{name}"


class Line(BaseModel):
    text: str
    box: Quad
    confidence: float = Field(ge=0.0, le=1.0)


class Block(BaseModel):
    """A layout region (structure and VL models): text, title, table, figure, formula, ..."""

    type: str
    box: Quad
    text: str | None = None
    html: str | None = None
    markdown: str | None = None


class PageResult(BaseModel):
    page: int = Field(ge=1)  # 1-based
    width: int  # the page as uploaded (or rendered), before any turn
    height: int
    rotation: Rotation = 0  # degrees turned counter-clockwise to read it; boxes are not turned
    lines: list[Line] = Field(default_factory=list)
    blocks: list[Block] = Field(default_factory=list)
    markdown: str | None = None
    # Where the lines came from: the PDF's own text layer, or OCR of the rendered page.
    text_source: TextSource = "ocr"

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


class EngineInfo(BaseModel):
    name: str  # e.g. "paddleocr" or "substitute:PP-OCRv5"
    version: str
    models: list[str]
    substitute: bool = False  # True when a stand-in engine served a model it is not


class SourceInfo(BaseModel):
    bucket: str
    key: str
    sha256: str
    media_type: str
    page_count: int
    size_bytes: int


class OcrResult(BaseModel):
    """result.json. Boxes are in the rendered page's pixel space, origin top-left."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal["1"] = "1"
    job_id: str
    model: str
    lang: str
    engine: EngineInfo
    source: SourceInfo
    pages: list[PageResult]
    text: str  # full text in reading order, pages separated by a blank line
    markdown: str | None = None  # full document Markdown for layout models
    timings_ms: dict[str, float] = Field(default_factory=dict)
    cached: bool = False  # served from the content-hash result cache

    @classmethod
    def assemble(
        cls,
        *,
        job_id: str,
        model: str,
        lang: str,
        engine: EngineInfo,
        source: SourceInfo,
        pages: list[PageResult],
        timings_ms: dict[str, float],
    ) -> OcrResult:
        text = "\n\n".join(page.text for page in pages)
        page_md = [page.markdown for page in pages if page.markdown is not None]
        markdown = "\n\n".join(page_md) if page_md else None
        return cls(
            job_id=job_id,
            model=model,
            lang=lang,
            engine=engine,
            source=source,
            pages=pages,
            text=text,
            markdown=markdown,
            timings_ms=timings_ms,
        )
