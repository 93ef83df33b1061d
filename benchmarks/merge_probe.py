"""The merge alone, in a fresh interpreter that imports only what the merge needs.

    python benchmarks/merge_probe.py PAGES_JSON TOTAL_PAGES CHUNK_PAGES

PAGES_JSON holds result pages (a merged result's "pages"); they are repeated to TOTAL_PAGES and
served to `stream_merged_result` as partials parsed from JSON, one chunk at a time, as the merge
reads them from S3. Prints one JSON line: the result's size, the merge's time, the interpreter's
peak RSS before and after the merge. benchmarks/fanout.py runs it.
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from idp.contract.jobs import ChunkSpec
from idp.contract.results import EngineInfo, PageResult, SourceInfo
from idp.flow.chunks.merge import merged_timings, stream_merged_result
from idp.flow.chunks.plan import ChunkPlan, PartialResult, plan_chunks


def peak_rss_mb() -> float:
    """This process's peak RSS. VmHWM where Linux has it: getrusage's ru_maxrss survives exec,
    so a probe started from a large process would report its parent's size instead."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(pages_json: Path, total_pages: int, chunk_pages: int) -> None:
    pages = [PageResult.model_validate(page) for page in json.loads(pages_json.read_text())]
    # A plan as the fan-out writes it; only the page count and chunks matter to the merge.
    source = {"bucket": "b", "key": "k", "sha256": "0" * 64, "media_type": "application/pdf"}
    plan = ChunkPlan(
        job_id="probe",
        model="PP-OCRv5",
        lang="en",
        source=SourceInfo(**source, page_count=total_pages, size_bytes=0),
        cache_key="0" * 64,
        chunks=plan_chunks(total_pages, chunk_pages),
    )
    engine = EngineInfo(name="paddleocr", version="probe", models=[])
    # Serialize one partial first, so lazy imports and caches count in the baseline.
    PartialResult(job_id="probe", chunk=plan.chunks[0], engine=engine, pages=pages[:1])
    baseline_mb = peak_rss_mb()

    def read(chunk: ChunkSpec) -> PartialResult:
        numbered = [
            pages[(n - 1) % len(pages)].model_copy(update={"page": n})
            for n in range(chunk.first_page, chunk.last_page + 1)
        ]
        text = PartialResult(job_id="probe", chunk=chunk, engine=engine, pages=numbered)
        return PartialResult.model_validate_json(text.model_dump_json())

    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        stream_merged_result(plan, read, out, timings=lambda t: merged_timings(plan, t, merge_ms=0))
        size = out.tell()
    seconds = time.perf_counter() - started
    peak_mb = peak_rss_mb()
    report = {
        "pages": total_pages,
        "result_mb": round(size / 1e6, 1),
        "baseline_rss_mb": round(baseline_mb, 1),
        "peak_rss_mb": round(peak_mb, 1),
        "rss_growth_mb": round(peak_mb - baseline_mb, 1),
        "merge_s": round(seconds, 2),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
