"""Chunk plans and the streaming merge of partial results (idp/flow/chunks/merge.py)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from devkit.client import JobProgress
from idp.contract.job_record import JobRecord
from idp.contract.jobs import ChunkSpec, DispatchedJob
from idp.contract.names import OcrModel
from idp.contract.results import (
    EngineInfo,
    Line,
    OcrResult,
    PageQuality,
    PageResult,
    ReviewReason,
    SourceInfo,
)
from idp.flow.chunks.merge import MergeError, merged_timings, stream_merged_result
from idp.flow.chunks.plan import ChunkPlan, PartialResult, plan_chunks, should_chunk
from idp.flow.vl_submit import ChunkManifest, chunk_of_manifest, inference_id, manifest_key
from tests.paths import REPO_ROOT

MERGE_PROBE = REPO_ROOT / "benchmarks" / "merge_probe.py"
ENGINE = EngineInfo(name="paddleocr", version="3", models=["PP-OCRv5_mobile_det"])


def _page(number: int, *, markdown: bool = False) -> PageResult:
    text = f'Ünïcode line {number} "quoted" \\ tab\there / 漢字'
    return PageResult(
        page=number,
        width=1000,
        height=1400,
        lines=[
            Line(text=text, box=((1, 2), (3, 2), (3, 4), (1, 4)), confidence=0.91),
            Line(text=f"second {number}", box=((5, 6), (7, 6), (7, 8), (5, 8)), confidence=1.0),
        ],
        markdown=f"# Page {number}\n\ntext {number}" if markdown else None,
        # every seventh page is doubtful
        quality=(
            PageQuality(verdict="review", reasons=[ReviewReason.LOW_CONFIDENCE])
            if number % 7 == 0
            else PageQuality(verdict="ok")
        ),
    )


def _plan(page_count: int, chunk_pages: int) -> ChunkPlan:
    return ChunkPlan(
        job_id="job-1",
        model="PP-OCRv5",
        lang="en",
        source=SourceInfo(
            bucket="in",
            key="input/PP-OCRv5/doc.pdf",
            sha256="ab" * 32,
            media_type="application/pdf",
            page_count=page_count,
            size_bytes=123,
        ),
        cache_key="cd" * 32,
        chunks=plan_chunks(page_count, chunk_pages),
        split_ms=12.5,
    )


def _parts(plan: ChunkPlan, *, markdown: bool = False) -> dict[int, PartialResult]:
    return {
        chunk.index: PartialResult(
            job_id=plan.job_id,
            chunk=chunk,
            engine=ENGINE,
            pages=[
                _page(n, markdown=markdown) for n in range(chunk.first_page, chunk.last_page + 1)
            ],
            timings_ms={
                "ocr": 100.0 * chunk.page_count,
                "orientation": 2.0 * chunk.page_count,
                "total": 150.0 * chunk.page_count,
            },
        )
        for chunk in plan.chunks
    }


def test_plan_covers_every_page_once_in_order() -> None:
    # GIVEN a 25-page document and 10-page chunks
    # WHEN it is planned
    chunks = plan_chunks(25, 10)

    # THEN three consecutive ranges cover pages 1..25, the last one shorter
    assert [(c.first_page, c.last_page) for c in chunks] == [(1, 10), (11, 20), (21, 25)]
    assert [c.index for c in chunks] == [0, 1, 2]
    assert sum(c.page_count for c in chunks) == 25
    assert chunks[2].label == "pages 21-25"


def test_only_documents_longer_than_a_chunk_are_chunked() -> None:
    assert not should_chunk(10, 10)
    assert should_chunk(11, 10)
    assert not should_chunk(3000, 0)  # 0 turns chunking off
    with pytest.raises(ValueError, match="at least 1"):
        plan_chunks(5, 0)


@pytest.mark.parametrize("markdown", [False, True])
def test_merged_result_reads_as_the_unchunked_result(markdown: bool) -> None:
    # GIVEN the partials of a 23-page document in chunks of 5
    plan = _plan(23, 5)
    parts = _parts(plan, markdown=markdown)
    out, md_out = io.BytesIO(), io.BytesIO()

    # WHEN they are merged
    merged = stream_merged_result(
        plan,
        lambda chunk: parts[chunk.index],
        out,
        timings=lambda t: merged_timings(plan, t, merge_ms=3.0),
        markdown_out=md_out,
    )

    # THEN result.json is valid and holds what assembling the whole document at once gives
    result = OcrResult.model_validate_json(out.getvalue())
    pages = [page for part in parts.values() for page in part.pages]
    expected = OcrResult.assemble(
        job_id="job-1",
        model="PP-OCRv5",
        lang="en",
        engine=ENGINE,
        source=plan.source,
        pages=pages,
        timings_ms=result.timings_ms,
    )
    assert result == expected
    assert [page.page for page in result.pages] == list(range(1, 24))
    assert merged.pages == 23
    assert merged.has_markdown is markdown
    # and the pages to review are the whole document's
    assert result.review_pages == merged.review_pages == [7, 14, 21]
    assert (md_out.getvalue().decode() or None) == expected.markdown
    # and the timings add the chunks' stages up and keep the orchestration's own
    assert result.timings_ms["ocr"] == 2300.0
    assert result.timings_ms["orientation"] == 46.0
    assert result.timings_ms["chunks"] == 5
    assert result.timings_ms["slowest_chunk"] == 750.0
    assert result.timings_ms["split"] == 12.5
    assert result.timings_ms["merge"] == 3.0


def test_a_partial_with_the_wrong_pages_is_refused() -> None:
    # GIVEN a partial for chunk 1 that holds chunk 0's pages
    plan = _plan(10, 5)
    parts = _parts(plan)
    parts[1] = parts[1].model_copy(update={"pages": parts[0].pages})

    # WHEN the merge reads it THEN it stops instead of writing a wrong document
    with pytest.raises(MergeError, match="pages 6-10"):
        stream_merged_result(
            plan, lambda chunk: parts[chunk.index], io.BytesIO(), timings=lambda t: {}
        )


def test_chunk_spec_round_trips_through_the_processor_event() -> None:
    chunk = ChunkSpec(index=3, first_page=31, last_page=40, part_key="work/j/chunks/00003.pdf")
    assert ChunkSpec.model_validate(json.loads(chunk.model_dump_json())) == chunk
    assert chunk.page_count == 10


def test_merge_memory_does_not_grow_with_the_document(tmp_path: Path) -> None:
    # GIVEN pages of 40 lines each, merged as 300 and as 3,000 pages in a fresh interpreter
    # (benchmarks/merge_probe.py, which imports only the merge)
    line = Line(text="line " + "x" * 100, box=((0, 0), (1, 0), (1, 1), (0, 1)), confidence=0.9)
    pages = [_page(n).model_copy(update={"lines": [line] * 40}) for n in range(1, 11)]
    pages_json = tmp_path / "pages.json"
    pages_json.write_text(json.dumps([page.model_dump(mode="json") for page in pages]))

    def run(total: int) -> dict[str, float]:
        done = subprocess.run(
            [sys.executable, str(MERGE_PROBE), str(pages_json), str(total), "10"],
            capture_output=True,
            text=True,
            check=True,
        )
        probe: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
        return probe

    # WHEN each is merged
    small, large = run(300), run(3000)

    # THEN the 3,000-page result is ten times larger, but the merge's memory is not
    assert large["result_mb"] > 9 * small["result_mb"]
    assert large["result_mb"] > 20
    assert large["rss_growth_mb"] < small["rss_growth_mb"] + 16, (small, large)


def test_progress_counts_running_chunks_page_by_page() -> None:
    # GIVEN a record with one chunk counted and two still reading
    record: JobRecord = {
        "job_id": "j",
        "status": "PROCESSING",
        "pages_total": 30,
        "pages_done": 10,
        "page_progress": {"0": 10, "1": 4, "2": 7},
        "chunks_total": 3,
        "chunks_done": 1,
    }

    # WHEN its progress is read THEN pages being read count too, chunks as they finish
    progress = JobProgress.of(record)
    assert (progress.pages_done, progress.pages_total) == (21, 30)
    assert progress.describe() == "21/30 (1/3 chunks)"
    # and a finished unchunked job shows its page count
    assert (
        JobProgress.of(
            {"job_id": "j", "status": "COMPLETED", "page_count": 2, "pages_done": 2}
        ).describe()
        == "2/2"
    )


@pytest.mark.parametrize("job_id", ["a" * 32, "b" * 64])
def test_a_vl_chunks_manifest_names_its_job_and_chunk_and_its_inference_id_fits(
    job_id: str,
) -> None:
    # GIVEN chunk 7 of a VL job (a derived 32-character id, and the longest id a user may give)
    chunk = ChunkSpec(index=7, first_page=71, last_page=80)
    job = DispatchedJob(
        job_id=job_id, bucket="in", key="k.pdf", model=OcrModel.PADDLEOCR_VL, lang="en", chunk=chunk
    )
    # WHEN its manifest key and inference id are made, and the key read back from a notification
    key = manifest_key(job)
    found = chunk_of_manifest(f"s3://results/{key}")
    # THEN the completion handler finds the job and chunk again; the id is SageMaker-sized and
    # differs per chunk, while a whole document's manifest names no chunk
    assert found == ChunkManifest(job_id=job_id, chunk_index=7)
    assert len(inference_id(job)) <= 64
    assert inference_id(job) != inference_id(job.model_copy(update={"chunk": None}))
    whole = manifest_key(job.model_copy(update={"chunk": None}))
    assert chunk_of_manifest(f"s3://results/{whole}") is None
