"""Fan-out of a large document: chunks in parallel against one invocation, locally.

    .venv/bin/python -m benchmarks.fanout [--pages 100] [--chunk-pages 10] [--workers 2]

One generated PDF (`devkit.synthetic.long_pdf`: every page numbered, so every page's text differs)
goes through the whole local pipeline (embedded AWS, real handlers, real PP-OCRv5) twice, each
time on a pipeline whose processor environments were warmed first (engine loaded):

1. chunking off (CHUNK_PAGES=0): one invocation OCRs every page;
2. fan-out: chunks of `--chunk-pages` pages on `--workers` processor environments;
3. for context, chunking off again with one environment given every core.

Runs 1 and 2 give each environment the same inference threads (the cores divided between the
fan-out's workers), as Lambda gives every environment of a function the same vCPUs; run 3 shows
what one environment does with the whole machine.

Reported (and written to benchmarks/results/fanout.json):
- wall time of each, submit → COMPLETED, and the speedup of 2 over 1 (target ≥ 1.8× with 2
  workers here), and of 2 over 3;
- orchestration overhead: split + dispatch + merge, as a share of one chunk's time (≤ 5 %);
- the projected wall time with 10 concurrent environments (as Lambda gives): split + dispatch +
  slowest chunk + merge, against one chunk alone (target ≤ 1.3×);
- the CER of the merged result against the known text;
- the merge's peak RSS: the merge of these partials (and of the same pages repeated to 3,000)
  re-run alone in a fresh interpreter, its growth over the interpreter's own RSS.
Figures come from one run on a shared machine: medians and ratios, never asserted.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.reporting import write_results
from devkit.local.pipeline import LocalPipeline
from devkit.local.settings import LocalSettings
from devkit.synthetic import encode, long_pdf, render_page
from devkit.textmetrics import character_error_rate
from idp.contract.names import JobStatus, OcrModel
from idp.contract.results import OcrResult

RESULTS = Path(__file__).parent / "results" / "fanout.json"
PROBE = Path(__file__).parent / "merge_probe.py"
JOB_TIMEOUT_S = 3600.0


def run_document(
    pdf: Path, *, work: Path, models_dir: Path, chunk_pages: int, workers: int, threads: int
) -> dict[str, Any]:
    settings = LocalSettings(
        work_dir=work,
        models_dir=models_dir,
        vl_enabled=False,
        processor_concurrency=workers,
        processor_threads=threads,
        chunk_pages=chunk_pages,
        quiet_functions=True,
    )
    with LocalPipeline(settings) as pipeline:
        client = pipeline.client()
        # Warm every environment: as many one-page jobs at once as there are workers.
        warm = work / "warm"
        warm.mkdir(exist_ok=True)
        warmups = []
        for index in range(workers):
            page = warm / f"warm-{index}.png"
            page.write_bytes(
                encode(render_page([f"Warm up {index}"], size=(600, 90), margin=20), "PNG")
            )
            warmups.append(client.submit(page, model=OcrModel.PP_OCRV5).job_id)
        client.wait(warmups, timeout_s=600)
        started = time.monotonic()
        submitted = client.submit(pdf, model=OcrModel.PP_OCRV5)
        record = client.wait([submitted.job_id], timeout_s=JOB_TIMEOUT_S)[submitted.job_id]
        wall_s = time.monotonic() - started
        if record is None or record["status"] != JobStatus.COMPLETED:
            raise SystemExit(f"the document did not complete: {record}")
        result = client.result_document(submitted.job_id)
    return {"wall_s": round(wall_s, 2), "record": record, "result": result}


def merge_probe(pages_json: Path, total_pages: int, chunk_pages: int) -> dict[str, float]:
    """Re-run the merge alone in a fresh interpreter (benchmarks/merge_probe.py)."""
    done = subprocess.run(
        [sys.executable, str(PROBE), str(pages_json), str(total_pages), str(chunk_pages)],
        capture_output=True,
        text=True,
        check=True,
    )
    probe: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return probe


def cer_of(result: dict[str, Any], texts: list[str]) -> float:
    read = "\n".join("\n".join(line["text"] for line in page["lines"]) for page in result["pages"])
    return round(character_error_rate("\n".join(texts), read), 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--chunk-pages", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--lines-per-page", type=int, default=3)
    parser.add_argument(
        "--page-size", default="1300x260", help="page pixels WxH (1700x2200: a letter page)"
    )
    parser.add_argument("--models-dir", type=Path, default=Path(".models"))
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory(prefix="idp-fanout-") as tmp:
        work = Path(tmp)
        width, height = (int(side) for side in args.page_size.split("x"))
        data, texts = long_pdf(args.pages, lines_per_page=args.lines_per_page, size=(width, height))
        pdf = work / f"numbered-{args.pages}-pages.pdf"
        pdf.write_bytes(data)
        # Every environment gets the same share of the machine, as every Lambda environment of
        # one function gets the same vCPUs: the cores split between the fan-out's workers.
        threads = max(1, cores // args.workers)
        run = functools.partial(run_document, pdf, models_dir=args.models_dir)
        single = run(work=work / "single", chunk_pages=0, workers=1, threads=threads)
        fanned = run(
            work=work / "fanout",
            chunk_pages=args.chunk_pages,
            workers=args.workers,
            threads=threads,
        )
        # For context: one environment with the whole machine to itself, chunking off.
        whole = run(work=work / "whole", chunk_pages=0, workers=1, threads=cores)
        pages_json = work / "pages.json"
        pages_json.write_text(json.dumps(fanned["result"]["pages"]))
        probes = [
            merge_probe(pages_json, args.pages, args.chunk_pages),
            merge_probe(pages_json, 3000, args.chunk_pages),
        ]

    timings = fanned["record"]["timings_ms"]
    overhead_ms = timings["split"] + timings.get("dispatch", 0.0) + timings["merge"]
    one_chunk_ms = timings["median_chunk"]
    projected_ms = overhead_ms + timings["slowest_chunk"]
    same = (
        OcrResult.model_validate(single["result"]).text
        == OcrResult.model_validate(fanned["result"]).text
    )
    report = {
        "document": {
            "pages": args.pages,
            "bytes": len(data),
            "chunk_pages": args.chunk_pages,
            "lines_per_page": args.lines_per_page,
            "page_size": args.page_size,
        },
        "machine": {"cpus": cores, "python": platform.python_version()},
        "workers": args.workers,
        "threads_per_environment": threads,
        "chunking_off_wall_s": single["wall_s"],
        "fan_out_wall_s": fanned["wall_s"],
        "speedup": round(single["wall_s"] / fanned["wall_s"], 2),
        "chunking_off_whole_machine_wall_s": whole["wall_s"],
        "speedup_over_whole_machine": round(whole["wall_s"] / fanned["wall_s"], 2),
        "chunks": int(timings["chunks"]),
        "split_ms": timings["split"],
        "dispatch_ms": timings.get("dispatch", 0.0),
        "merge_ms": timings["merge"],
        "median_chunk_ms": one_chunk_ms,
        "slowest_chunk_ms": timings["slowest_chunk"],
        "overhead_share_of_chunk": round(overhead_ms / one_chunk_ms, 4),
        "projected_10_env_wall_ms": round(projected_ms, 1),
        "projected_vs_one_chunk": round(projected_ms / one_chunk_ms, 2),
        "cer_fan_out": cer_of(fanned["result"], texts),
        "cer_chunking_off": cer_of(single["result"], texts),
        "same_text_as_unchunked": same,
        "merge_probes": probes,
        "targets": {"speedup": 1.8, "overhead_share": 0.05, "projected_vs_one_chunk": 1.3},
    }
    rows = [
        (f"wall, chunking off (1 invocation, {threads} thread)", f"{single['wall_s']:.1f} s"),
        (
            f"wall, fan-out ({report['chunks']} chunks, {args.workers} workers × {threads} thread)",
            f"{fanned['wall_s']:.1f} s",
        ),
        ("speedup (target ≥ 1.8×)", f"{report['speedup']:.2f}×"),
        (f"wall, chunking off, 1 invocation with all {cores} cores", f"{whole['wall_s']:.1f} s"),
        ("fan-out speedup over that", f"{report['speedup_over_whole_machine']:.2f}×"),
        ("split + dispatch + merge", f"{overhead_ms:.0f} ms"),
        ("one chunk (median)", f"{one_chunk_ms:.0f} ms"),
        ("overhead / one chunk (target ≤ 5 %)", f"{report['overhead_share_of_chunk']:.1%}"),
        ("projected wall, 10 environments", f"{projected_ms / 1000:.1f} s"),
        ("projected / one chunk (target ≤ 1.3×)", f"{report['projected_vs_one_chunk']:.2f}×"),
        (
            "CER merged / unchunked",
            f"{report['cer_fan_out']:.2%} / {report['cer_chunking_off']:.2%}",
        ),
        ("merged text = unchunked text", str(same)),
    ]
    rows += [
        (
            f"merge of {p['pages']} pages ({p['result_mb']} MB result.json)",
            f"+{p['rss_growth_mb']} MB RSS (peak {p['peak_rss_mb']} MB), {p['merge_s']} s",
        )
        for p in probes
    ]
    width = max(len(name) for name, _ in rows)
    print(f"\n{args.pages}-page PDF, {args.chunk_pages}-page chunks\n")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_results(report, args.out)
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
