"""The streaming merge of a chunked job: its partials, in page order, into one result.json (+
result.md).

The merge reads one partial at a time and writes the result to a file as it goes, so its memory is
bounded by the largest chunk's text, never by the document: a 3,000-page result is never held
whole, and no page image is ever read. Everything here is plain S3 and JSON, with no OCR engine.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Final

from idp.contract.jobs import ChunkSpec
from idp.contract.results import EngineInfo, OcrResult, PageResult, review_pages
from idp.flow.chunks.plan import ChunkPlan, PartialResult

_PAGE_SEPARATOR: Final = "\n\n"  # as OcrResult.assemble joins pages


class MergeError(RuntimeError):
    """The partials do not add up to the planned document (a bug, never a user's input)."""


# Stage timings summed over chunks; the rest are per-job.
_SUMMED_STAGES: Final = ("download", "engine_load", "open", "rasterize", "ocr")
# Optional steps: summed only where a chunk ran them.
_SUMMED_WHEN_RUN: Final = ("orientation", "text_layer")


def merged_timings(
    plan: ChunkPlan, part_timings: Sequence[dict[str, float]], *, merge_ms: float
) -> dict[str, float]:
    """The merged result's timings: summed stage times, the slowest chunk, split and merge."""
    timings = {
        stage: round(sum(t.get(stage, 0.0) for t in part_timings), 1) for stage in _SUMMED_STAGES
    }
    for stage in _SUMMED_WHEN_RUN:
        if any(stage in t for t in part_timings):
            timings[stage] = round(sum(t.get(stage, 0.0) for t in part_timings), 1)
    timings["chunks"] = float(len(part_timings))
    totals = sorted(t.get("total", 0.0) for t in part_timings)
    timings["slowest_chunk"] = totals[-1] if totals else 0.0
    timings["median_chunk"] = totals[len(totals) // 2] if totals else 0.0
    timings["split"] = plan.split_ms
    timings["merge"] = round(merge_ms, 1)
    return timings


@dataclass(frozen=True)
class MergedResult:
    """What the merge wrote: facts the job record keeps."""

    pages: int
    has_markdown: bool
    engine: EngineInfo
    timings_ms: dict[str, float]
    review_pages: list[int]


def stream_merged_result(
    plan: ChunkPlan,
    read_part: Callable[[ChunkSpec], PartialResult],
    out: IO[bytes],
    *,
    timings: Callable[[list[dict[str, float]]], dict[str, float]],
    markdown_out: IO[bytes] | None = None,
    on_page: Callable[[PageResult], None] | None = None,
) -> MergedResult:
    """Write result.json for the whole document to `out` (and result.md to `markdown_out`).

    `read_part` loads one chunk's partial; only one is held at a time. The text and Markdown,
    which come after the pages in result.json, are spooled to temporary files meanwhile. The
    output parses to what `OcrResult.assemble` gives for the same pages, so a chunked
    document's result reads exactly like an unchunked one's. `on_page` sees each page in order
    (result.textract.json is written from it).
    """
    with (
        tempfile.TemporaryFile() as pages,
        tempfile.TemporaryFile() as text,
        tempfile.TemporaryFile() as markdown,
    ):
        spools = _Spools(pages=pages, text=text, markdown=markdown, markdown_out=markdown_out)
        engine: EngineInfo | None = None
        part_timings: list[dict[str, float]] = []
        for chunk in plan.chunks:
            part = read_part(chunk)
            _check_part(plan, chunk, part)
            engine = engine or part.engine
            part_timings.append(part.timings_ms)
            for page in part.pages:
                spools.add(page)
                if on_page is not None:
                    on_page(page)
            del part
        if engine is None:
            raise MergeError(f"job {plan.job_id}: the plan has no chunks")
        header = OcrResult(
            job_id=plan.job_id,
            model=plan.model,
            lang=plan.lang,
            engine=engine,
            source=plan.source,
            pages=[],
            text="",
            markdown="" if spools.has_markdown else None,
            timings_ms=timings(part_timings),
            review_pages=spools.review_pages,
        )
        _write_fields(out, json.loads(header.model_dump_json()), spools)
    return MergedResult(
        pages=spools.pages_written,
        has_markdown=spools.has_markdown,
        engine=engine,
        timings_ms=header.timings_ms,
        review_pages=spools.review_pages,
    )


@dataclass
class _Spools:
    """The merged result's pages, text and Markdown, written page by page to temporary files."""

    pages: IO[bytes]
    text: IO[bytes]  # the inside of a JSON string
    markdown: IO[bytes]  # the inside of a JSON string
    markdown_out: IO[bytes] | None  # result.md, raw
    pages_written: int = 0
    has_markdown: bool = False
    review_pages: list[int] = field(default_factory=list)

    def add(self, page: PageResult) -> None:
        self.review_pages.extend(review_pages([page]))
        if self.pages_written:
            self.pages.write(b",")
            self.text.write(_json_fragment(_PAGE_SEPARATOR))
        self.pages.write(page.model_dump_json().encode())
        self.text.write(_json_fragment(page.text))
        self.pages_written += 1
        if page.markdown is None:
            return
        if self.has_markdown:
            self._add_markdown(_PAGE_SEPARATOR)
        self._add_markdown(page.markdown)
        self.has_markdown = True

    def _add_markdown(self, markdown: str) -> None:
        self.markdown.write(_json_fragment(markdown))
        if self.markdown_out is not None:
            self.markdown_out.write(markdown.encode())


def _write_fields(out: IO[bytes], fields: dict[str, object], spools: _Spools) -> None:
    """Emit the result's fields in model order, streaming the three spooled ones."""
    out.write(b"{")
    for position, (name, value) in enumerate(fields.items()):
        if position:
            out.write(b",")
        out.write(json.dumps(name).encode() + b":")
        if name == "pages":
            out.write(b"[")
            _copy(spools.pages, out)
            out.write(b"]")
        elif name == "text" or (name == "markdown" and value is not None):
            out.write(b'"')
            _copy(spools.text if name == "text" else spools.markdown, out)
            out.write(b'"')
        else:
            out.write(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
    out.write(b"}")


def _copy(source: IO[bytes], target: IO[bytes]) -> None:
    source.seek(0)
    shutil.copyfileobj(source, target, length=1024 * 1024)


def _json_fragment(text: str) -> bytes:
    """`text` as the inside of a JSON string, as pydantic writes it (UTF-8, not ASCII-escaped)."""
    return json.dumps(text, ensure_ascii=False)[1:-1].encode()


def _check_part(plan: ChunkPlan, chunk: ChunkSpec, part: PartialResult) -> None:
    numbers = [page.page for page in part.pages]
    expected = list(range(chunk.first_page, chunk.last_page + 1))
    if part.job_id != plan.job_id or part.chunk.index != chunk.index or numbers != expected:
        raise MergeError(
            f"job {plan.job_id}: the partial of chunk {chunk.index} ({chunk.label}) holds "
            f"pages {numbers[:3]}…, not {chunk.label}"
        )
