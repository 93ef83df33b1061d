"""Born-digital PDFs: the text layer against OCR, one 40-page document, both in one run.

    .venv/bin/python -m benchmarks.text_layer [--pages 40] [--workers 2] [--rule]

A generated born-digital PDF (`devkit.synthetic_pdf.benchmark_pages`: A4 pages of `--lines` lines
of 11 pt vector text and a line of 2.5 pt fine print) goes through the local pipeline as
`idp local run --text-layer auto|ocr` runs it (embedded AWS, the real handlers, real PP-OCRv5,
`--workers` processor environments, chunks of 10 pages), once with `text_layer` "auto" and once
with "ocr", on environments warmed first (engine loaded). Reported, and written to
benchmarks/results/text_layer.json:
- time per page: end to end (the job's created_at → finished_at over its pages) and the
  processor's own per-page work (open + rasterize + text layer + OCR, summed over chunks);
- the CER of each result against the text the PDF holds (fine print included);
- dollars per 1,000 pages: the per-page work × the processor's memory at Lambda's price, plus
  the per-page requests measured by benchmarks/cost.py (its prices, its results file).
`--rule` also prints the coverage rule's measurement (idp.document.text_layer.rule) on every kind of
page in `devkit.synthetic_pdf.rule_pages`. Figures from one run, never asserted.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.cost import PRICES, RESULTS_DIR
from benchmarks.measure import seconds_between
from benchmarks.reporting import write_results
from devkit.local.pipeline import LocalPipeline
from devkit.local.settings import LocalSettings
from devkit.synthetic_pdf import PageSpec, benchmark_pages, born_digital_pdf, page_lines, rule_pages
from devkit.textmetrics import edit_distance, normalize_text
from idp.contract import names
from idp.contract.jobs import JobOptions
from idp.contract.names import JobStatus, OcrModel, TextLayerMode
from idp.contract.topology import PROCESSOR_MEMORY_MB

RESULTS = RESULTS_DIR / "text_layer.json"
_WORK_STAGES = ("open", "rasterize", "text_layer", "ocr")
FINE_PRINT_START = "Terms "  # how devkit.synthetic_pdf.fine_print begins
JOB_TIMEOUT_S = 3600.0


def measure_rule() -> list[dict[str, Any]]:
    """The coverage rule's signal on each kind of page it must tell apart."""
    import pypdfium2  # type: ignore[import-untyped]

    from idp.document.text_layer.extract import extract_text_layer
    from idp.document.text_layer.rule import measure_coverage

    rows = []
    for kind, specs in rule_pages().items():
        document = pypdfium2.PdfDocument(born_digital_pdf(specs))
        values = []
        for index in range(len(document)):
            page = document[index]
            values.append(measure_coverage(page, extract_text_layer(page, scale=2.0)))
            page.close()
        document.close()
        text_ink = [v.text_ink for v in values]
        rows.append(
            {
                "kind": kind,
                "text_ink_min": min(text_ink),
                "text_ink_max": max(text_ink),
                "read_from_layer": [v.layer_covers_page for v in values],
            }
        )
    return rows


def run_job(pipeline: LocalPipeline, pdf: Path, mode: TextLayerMode) -> dict[str, Any]:
    client = pipeline.client()
    submitted = client.submit(pdf, model=OcrModel.PP_OCRV5, options=JobOptions(text_layer=mode))
    record = client.wait([submitted.job_id], timeout_s=JOB_TIMEOUT_S, poll_s=0.2)[submitted.job_id]
    if record is None or record["status"] != JobStatus.COMPLETED:
        raise SystemExit(f"the {mode} job did not complete: {record}")
    return {"record": record, "result": client.result_document(submitted.job_id)}


def _text(page: dict[str, Any], skip: str | None = None) -> str:
    return "\n".join(
        line["text"] for line in page["lines"] if skip is None or skip not in line["text"]
    )


def document_cer(expected: list[str], got: list[str]) -> float:
    """Edit distance over reference length, summed page by page (the distance is quadratic in
    the text's length, so a whole document at once would take minutes)."""
    distance = sum(
        edit_distance(normalize_text(e), normalize_text(g))
        for e, g in zip(expected, got, strict=True)
    )
    return round(distance / sum(len(normalize_text(e)) for e in expected), 5)


def summarize(mode: str, run: dict[str, Any], specs: list[PageSpec]) -> dict[str, Any]:
    record, result = run["record"], run["result"]
    pages = result["pages"]
    timings = result["timings_ms"]
    work_ms = sum(float(timings.get(stage, 0.0)) for stage in _WORK_STAGES)
    work_s_per_page = work_ms / 1000 / len(pages)
    cost = json.loads((RESULTS_DIR / "cost.json").read_text())
    memory_gb = PROCESSOR_MEMORY_MB / 1024
    compute = work_s_per_page * memory_gb * PRICES["lambda_gb_s"]
    return {
        "mode": mode,
        "pages": len(pages),
        "chunks": record.get("chunks_total", 0),
        "pages_from_text_layer": sum(p.get("text_source") == "text_layer" for p in pages),
        "end_to_end_s": round(seconds_between(record, "created_at", "finished_at"), 2),
        "end_to_end_ms_per_page": round(
            1000 * seconds_between(record, "created_at", "finished_at") / len(pages), 1
        ),
        "work_ms_per_page": round(work_ms / len(pages), 1),
        "stages_ms": {stage: timings.get(stage, 0.0) for stage in _WORK_STAGES},
        "cer": document_cer([spec.text for spec in specs], [_text(p) for p in pages]),
        "cer_without_fine_print": document_cer(
            ["\n".join(spec.lines) for spec in specs],
            [_text(p, skip=FINE_PRINT_START) for p in pages],
        ),
        "usd_per_1000_pages": round(
            1000 * (compute + float(cost["requests_usd_per_page_chunked"])), 4
        ),
        "usd_per_1000_pages_compute_only": round(1000 * compute, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--lines", type=int, default=12, help="lines of 11 pt text a page")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--models-dir", type=Path, default=Path(".models"))
    parser.add_argument("--rule", action="store_true")
    args = parser.parse_args()

    rule = measure_rule() if args.rule else None
    specs = benchmark_pages(args.pages, args.lines)
    with tempfile.TemporaryDirectory(prefix="idp-text-layer-") as tmp:
        work = Path(tmp)
        pdf = work / "born-digital.pdf"
        pdf.write_bytes(born_digital_pdf(specs))
        settings = LocalSettings(
            work_dir=work / "pipeline",
            models_dir=args.models_dir,
            vl_enabled=False,
            processor_concurrency=args.workers,
            chunk_pages=names.DEFAULT_CHUNK_PAGES,
            quiet_functions=True,
        )
        with LocalPipeline(settings) as pipeline:
            # Warm every environment (engine loaded) with one scanned page each, at once.
            client = pipeline.client()
            warmups = []
            for index in range(args.workers):
                page = work / f"warm-{index}.pdf"
                scan = PageSpec(lines=page_lines(100 + index, 3), kind="scanned")
                page.write_bytes(born_digital_pdf([scan]))
                warmups.append(client.submit(page, model=OcrModel.PP_OCRV5).job_id)
            client.wait(warmups, timeout_s=600)
            started = time.monotonic()
            runs = {
                mode: run_job(pipeline, pdf, mode)
                for mode in (TextLayerMode.AUTO, TextLayerMode.OCR)
            }
            wall_s = time.monotonic() - started

    rows = [summarize(str(mode), run, specs) for mode, run in runs.items()]
    auto, ocr = rows
    report = {
        "pages": args.pages,
        "lines_per_page": args.lines,
        "workers": args.workers,
        "wall_s_both_jobs": round(wall_s, 1),
        "speedup_end_to_end": round(
            ocr["end_to_end_ms_per_page"] / auto["end_to_end_ms_per_page"], 1
        ),
        "speedup_work": round(ocr["work_ms_per_page"] / auto["work_ms_per_page"], 1),
        "prices_read": json.loads((RESULTS_DIR / "cost.json").read_text())["prices_read"],
        "runs": rows,
        "rule": rule,
    }
    if rule is not None:
        print(f"\n{'page kind (3 each)':<34} {'ink inside layer lines':>24}  read from layer")
        for row in rule:
            span = f"{row['text_ink_min']:.2f}-{row['text_ink_max']:.2f}"
            print(f"{row['kind']:<34} {span:>24}  {row['read_from_layer']}")
    print(
        f"\n{args.pages}-page born-digital PDF ({args.lines} lines a page), "
        f"{args.workers} workers, chunks of 10 pages"
    )
    header = f"{'text_layer':<10} {'layer pages':>11} {'e2e ms/page':>12} {'work ms/page':>13}"
    print(f"{header} {'CER':>8} {'CER w/o fine print':>19} {'$ / 1,000 pages':>16}")
    for row in rows:
        print(
            f"{row['mode']:<10} {row['pages_from_text_layer']:>11} "
            f"{row['end_to_end_ms_per_page']:>12,.1f} {row['work_ms_per_page']:>13,.1f} "
            f"{row['cer']:>8.2%} {row['cer_without_fine_print']:>19.2%} "
            f"{row['usd_per_1000_pages']:>16.4f}"
        )
    print(
        f"speedup auto vs ocr: {report['speedup_end_to_end']}× end to end, "
        f"{report['speedup_work']}× processor work per page"
    )
    RESULTS.parent.mkdir(exist_ok=True)
    write_results(report, RESULTS)
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
