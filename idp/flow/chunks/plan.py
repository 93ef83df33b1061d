"""A large document's plan: its page ranges, where its intermediates lie in S3, and the plan and
partial results the merge reads.

A document with more pages than the chunk size is read as several page ranges in parallel (one
processor invocation or VL inference each, see ocr_processor_image/chunked_job.py). Each chunk
leaves a partial result; the last one to be counted merges them (idp.flow.chunks.fan_in, merge).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from idp.contract import names
from idp.contract.jobs import ChunkSpec
from idp.contract.results import EngineInfo, PageResult, SourceInfo


def plan_chunks(page_count: int, chunk_pages: int) -> list[ChunkSpec]:
    """Consecutive page ranges of `chunk_pages` pages (the last one may be shorter)."""
    if chunk_pages < 1:
        raise ValueError(f"chunk_pages must be at least 1, not {chunk_pages}")
    return [
        ChunkSpec(index=index, first_page=first, last_page=min(first + chunk_pages - 1, page_count))
        for index, first in enumerate(range(1, page_count + 1, chunk_pages))
    ]


def should_chunk(page_count: int, chunk_pages: int) -> bool:
    """Chunk only documents longer than one chunk; `chunk_pages` 0 turns chunking off."""
    return chunk_pages > 0 and page_count > chunk_pages


def work_prefix(job_id: str) -> str:
    return f"{names.WORK_PREFIX}{job_id}/"


def plan_key(job_id: str) -> str:
    return f"{work_prefix(job_id)}{names.WORK_PLAN}"


def part_pdf_key(job_id: str, index: int) -> str:
    return f"{work_prefix(job_id)}chunks/{index:05d}.pdf"


def partial_key(job_id: str, index: int) -> str:
    return f"{work_prefix(job_id)}parts/{index:05d}.json"


def searchable_part_key(job_id: str, index: int) -> str:
    """work/<job_id>/searchable/<n>.pdf: chunk n's pages of result.pdf."""
    return f"{work_prefix(job_id)}searchable/{index:05d}.pdf"


class ChunkPlan(BaseModel):
    """work/<job_id>/plan.json: what the merge needs besides the partials."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    model: str
    lang: str
    source: SourceInfo
    cache_key: str | None  # the result cache entry the merged result fills (None: no cache)
    chunks: list[ChunkSpec]
    split_ms: float = 0.0  # opening, splitting and uploading the chunk inputs
    dispatch_ms: float = 0.0  # invoking the chunks (recorded after the fact, may stay 0)
    textract: bool = True  # write result.textract.json (the job's textract_json option)
    owner: str | None = None  # the job's sender: its results go under results/<owner>/


class PartialResult(BaseModel):
    """work/<job_id>/parts/<n>.json: one chunk's pages, numbered as in the whole document."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    chunk: ChunkSpec
    engine: EngineInfo
    pages: list[PageResult]
    timings_ms: dict[str, float] = Field(default_factory=dict)
