"""The canonical result document (result.json) written for every COMPLETED job."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from idp.contract import names
from idp.contract.conversion import ConversionInfo

Point = tuple[float, float]
# Clockwise from the text's top-left corner, in the pixel space of the page as uploaded (or
# rendered): on a page read turned (PageResult.rotation), box[0] → box[1] still runs along
# the text's reading direction, which is then not left to right on the page.
Quad = tuple[Point, Point, Point, Point]
# Degrees a page was turned counter-clockwise to read it upright (PaddleOCR's doc orientation).
Rotation = Literal[0, 90, 180, 270]
# Where a page's (or a block's) text came from: the PDF's own text layer, OCR of its pixels, or
# both (a born-digital page whose figure labels only the pixels hold).
TextSource = Literal["text_layer", "ocr", "mixed"]


# The slice of a job no sender was named for (an emulator's S3 event carries no uploader).
UNOWNED: Final = "unowned"
# An IAM principal id as SQS and S3 give it (`AROA…:session`, `AIDA…`, an account id): no "/",
# and no leading "." (so never the result cache's `.cache`).
_OWNER_SLICE: Final = re.compile(r"[A-Za-z0-9+=,@_:-][A-Za-z0-9+=,.@_:-]{0,199}")


def results_prefix(job_id: str, *, owner: str | None) -> str:
    """results/<owner>/<job_id>/: a job's result files sit under its owner's slice, so one grant
    on results/<principal id>* gives a producer its results and no one else's."""
    slice_ = owner or UNOWNED
    if not _OWNER_SLICE.fullmatch(slice_):
        raise ValueError(f"{slice_!r} is not an IAM principal id")
    return f"{names.RESULTS_PREFIX}{slice_}/{job_id}/"


def result_key(job_id: str, name: str = names.RESULT_JSON, *, owner: str | None) -> str:
    """results/<owner>/<job_id>/<name>: where a job's result files live in the results bucket."""
    return results_prefix(job_id, owner=owner) + name


class Word(BaseModel):
    """A word of a line (its text between whitespace, as Textract counts words) and its box."""

    text: str
    box: Quad
    # The lowest confidence of its characters, where the recognizer gave them (PP-OCRv5,
    # PP-OCRv6): one doubtful digit makes a doubtful number.
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)


class Line(BaseModel):
    text: str
    box: Quad
    confidence: float = Field(ge=0.0, le=1.0)
    # Where measured, in order: from the recognizer's character columns (OCR) or the PDF's
    # glyph boxes (text layer). Empty where the engine gives no positions (PP-StructureV3,
    # PaddleOCR-VL): result.textract.json then places words by their share of the line's text.
    words: list[Word] = Field(default_factory=list)


class TableCell(BaseModel):
    """A cell of a table block: its place in the table's grid (1-based, as Textract counts), how
    many rows and columns it spans, its text and where it lies on the page."""

    row: int = Field(ge=1)
    column: int = Field(ge=1)
    row_span: int = Field(default=1, ge=1)
    column_span: int = Field(default=1, ge=1)
    text: str = ""
    box: Quad | None = None  # None where the table model placed no box for it


# The types of a layout model's blocks (PP-StructureV3, PaddleOCR-VL), whatever the model's own
# label (Block.label): what a consumer can rely on.
LAYOUT_BLOCK_TYPES: Final = (
    "title",
    "text",
    "list",
    "table",
    "figure",
    "caption",
    "header",
    "footer",
    "formula",
)


class Block(BaseModel):
    """A region of a page, in reading order, naming its `lines`. Layout models (PP-StructureV3,
    PaddleOCR-VL): their regions, typed as LAYOUT_BLOCK_TYPES, with the model's own `label`; a
    table carries its HTML and its cells. Text-line models (PP-OCRv5, PP-OCRv6): the page's lines
    grouped as a person reads them (paragraph, heading, table, header, footer, vertical,
    right_to_left), with no label."""

    type: str
    box: Quad
    text: str | None = None
    html: str | None = None
    markdown: str | None = None
    lines: list[int] = Field(default_factory=list)  # indices into the page's lines, in order
    label: str | None = None  # the layout model's own label (PP-DocLayout's: doc_title, image, …)
    cells: list[TableCell] = Field(default_factory=list)  # a table's, row by row
    # Where its text came from, where a layout job read a born-digital page from its PDF.
    text_source: TextSource | None = None


class Stage(BaseModel):
    """A stage of a layout pipeline on a page: the model that ran it, or why it did not run."""

    name: str  # layout, ocr, table, formula, seal, chart, region
    model: str | None = None  # None where it did not run
    substitute_for: str | None = None  # the model it stands in for, where it is a substitute
    note: str | None = None  # why it is off, or what differs


ScalarEvidence = float | int | str | bool | None
Evidence = dict[str, ScalarEvidence | list[ScalarEvidence]]


class OrientationCheck(BaseModel):
    """How a page's rotation was decided: the page classifier proposes, the page's own lines
    decide (idp.document.ocr.steps.orientation)."""

    proposed: Rotation  # the page classifier's label
    rotation: Rotation  # what was decided (PageResult.rotation)
    reason: str
    evidence: Evidence = Field(default_factory=dict)
    reads: int = 1  # full reads of the page it took


class RenderInfo(BaseModel):
    """How a PDF page was rasterized for OCR: boxes are in its pixel space, so a box's point
    (x, y) is (x / scale, y / scale) in PDF points from the page's top-left corner."""

    scale: float = Field(gt=0)  # pixels per PDF point (1.0 = 72 dpi)
    reason: str
    scan_dpi: float | None = None  # effective dpi of the page's scan image, where it has one


class ReviewReason(StrEnum):
    """Why a page's result is doubtful (PageQuality.reasons)."""

    LOW_CONFIDENCE = "low_confidence"  # mean line confidence is low
    MANY_UNREADABLE_LINES = "many_unreadable_lines"  # many lines read with low confidence
    INK_NOT_READ = "ink_not_read"  # text-like ink that no line covers
    NO_TEXT_FOUND = "no_text_found"  # the page has ink but no line was read
    TEXT_TOO_SMALL = "text_too_small"  # lines are too few pixels high to read reliably
    # The detector saw the lines too small: the page was shrunk to its input limit (a long
    # wide strip; a tall page is read in tiles instead).
    TEXT_SHRUNK = "text_shrunk"
    NO_LAYOUT_FOUND = "no_layout_found"  # a layout model found no region on a page with ink
    TABLE_NOT_READ = "table_not_read"  # a table region that came back with no cell holding text
    TEXT_VERTICAL = "text_vertical"  # most lines stand upright: a sideways page read as given
    ORIENTATION_UNCERTAIN = "orientation_uncertain"  # the evidence on rotation was contested
    LOW_RESOLUTION = "low_resolution"  # the scan itself has too few pixels for its text
    # A number, date or code read with a doubtful character: an amount or a date may be wrong.
    NUMBERS_DOUBTFUL = "numbers_doubtful"
    # A table whose text runs across its cells' boundaries: its grid cuts through its text.
    TABLE_TEXT_SPLIT = "table_text_split"
    # A table whose grid disagrees with its text's alignment: columns the text shows that the
    # grid lacks, or a boundary most rows' text runs across.
    TABLE_GRID_MISALIGNED = "table_grid_misaligned"
    TABLE_CELLS_MISSING = "table_cells_missing"  # a row whose cells do not fill the grid
    # A born-digital table whose cells, read again from the page's pixels, do not say what its
    # PDF's text layer says: the layer may map its glyphs wrong.
    TABLE_LAYER_MISMATCH = "table_layer_mismatch"
    TABLE_MISSED = "table_missed"  # aligned columns of numbers that no table block holds
    # A table of one row or one column: a piece of a table the grid broke up, or no table.
    TABLE_FRAGMENT = "table_fragment"
    # A table whose cells each hold several rows of text: the grid merged rows it should part.
    TABLE_ROWS_MERGED = "table_rows_merged"
    # A table that parts one wrapped cell into rows: a row holding only the row's other cells
    # between rows holding only their first, as where a value sits beside a wrapped label.
    TABLE_ROWS_SPLIT = "table_rows_split"


PageVerdict = Literal["ok", "review"]


class PageQuality(BaseModel):
    """What a page's OCR says about its own trustworthiness, and the verdict drawn from it."""

    verdict: PageVerdict
    reasons: list[ReviewReason] = Field(default_factory=list)
    lines: int = 0
    mean_confidence: float | None = None  # weighted by characters
    p10_confidence: float | None = None  # 10th percentile of line confidence
    low_confidence_lines: int = 0  # lines read with confidence under 0.6
    dropped_lines: int = 0  # detected lines that read as nothing (left out of `lines`)
    ink_covered: float | None = None  # share of the page's text-like ink inside a line box
    line_height_px: float | None = None  # median line height on the rendered page
    # The same as the text detector saw it (the page scaled to its input limit), where known.
    detected_line_px: float | None = None
    retried: str | None = None  # what a second read of the page changed, where one ran
    # Numeric tokens (digits and , . / : -) whose words carry a confidence, and how many of
    # them have a character read with low confidence; None where no word carries one.
    numbers: int | None = None
    doubtful_numbers: list[str] = Field(default_factory=list)


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
    orientation: OrientationCheck | None = None  # where the page's rotation was checked
    render: RenderInfo | None = None  # PDF pages rendered for OCR
    quality: PageQuality | None = None  # OCR'd pages
    stages: list[Stage] = Field(default_factory=list)  # a layout pipeline's, as they ran here

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
    sha256: str  # of the input as uploaded
    media_type: str  # of the input as uploaded (an Office type where it was converted)
    page_count: int
    size_bytes: int
    # Where the pages read are an Office document's conversion to PDF: by what, how long.
    conversion: ConversionInfo | None = None


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
    review_pages: list[int] = Field(default_factory=list)  # pages whose verdict is "review"

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
            review_pages=review_pages(pages),
        )


def review_pages(pages: list[PageResult]) -> list[int]:
    """The pages whose quality verdict asks a person to look."""
    return [
        page.page for page in pages if page.quality is not None and page.quality.verdict == "review"
    ]
