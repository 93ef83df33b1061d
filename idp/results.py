"""The canonical result document (result.json) written for every COMPLETED job."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Point = tuple[float, float]
Quad = tuple[Point, Point, Point, Point]  # clockwise from top-left, page pixel space
TextSource = Literal["text_layer", "ocr"]


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
    width: int
    height: int
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
