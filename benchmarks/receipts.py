"""Long till receipts: this pipeline reading tall pages in tiles, the same page read whole (the
detector's input limited by its longest side, as before), and Tesseract 5, on the same pixels.

    .venv/bin/python -m benchmarks.receipts [--output FILE]

Receipts are generated (devkit.receipts: 576 px wide, 22-px text, 5,000 to 10,000 px tall, known
text). Each is read by `ocr_document` as the processor reads it, with PP-OCRv5 and PP-OCRv6; the
"whole page" rows read the page with no page counting as tall (the detector sees it in one
piece, as before tiles), with the same page steps. Tesseract (Debian `tesseract-ocr`,
`--psm 4`: a single column of text of variable sizes) reads the same PNG. Scored:
order-sensitive CER (whitespace runs as one space), the share of item rows read as one line
"NAME PRICE" exactly, the page's verdict, seconds per page. Prints a table and writes JSON
(default benchmarks/results/receipts.json). Figures from one run, never asserted.
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

from benchmarks.reporting import REPO_ROOT, write_results

RESULTS = REPO_ROOT / "benchmarks" / "results" / "receipts.json"
RECEIPTS = ((11, 140), (12, 180), (13, 220), (14, 260), (15, 283))  # (seed, items): 5.1-10 k px


def _score(lines: list[str], truth: list[str], items: list[tuple[str, str]]) -> dict[str, Any]:
    from devkit.textmetrics import character_error_rate

    rows = {f"{name} {price}" for name, price in items}
    return {
        "cer": round(character_error_rate("\n".join(truth), "\n".join(lines)), 4),
        "rows_on_one_line": round(sum(line in rows for line in lines) / len(items), 3),
    }


def _summarize(rows: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """Per engine: CER median and max, item rows on one line, verdicts ok, seconds; the table."""
    engines = list(dict.fromkeys(row["engine"] for row in rows))
    summary = {}
    out = io.StringIO()
    out.write("| engine | CER median (max) | item rows on one line | verdict ok | s/page |\n")
    out.write("|---|---|---|---|---|\n")
    for name in engines:
        mine = [row for row in rows if row["engine"] == name]
        cers = [row["cer"] for row in mine]
        summary[name] = {
            "cer_median": statistics.median(cers),
            "cer_max": max(cers),
            "rows_on_one_line_median": statistics.median(row["rows_on_one_line"] for row in mine),
            "ok": sum(row["verdict"] == "ok" for row in mine),
            "seconds_median": statistics.median(row["seconds"] for row in mine),
        }
        s = summary[name]
        ok = f"{s['ok']}/{len(mine)}" if mine[0]["verdict"] is not None else "–"
        out.write(
            f"| {name} | {s['cer_median']:.2%} ({s['cer_max']:.2%}) | "
            f"{s['rows_on_one_line_median']:.0%} | {ok} | {s['seconds_median']:.1f} |\n"
        )
    return summary, out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--models-dir", type=Path, default=REPO_ROOT / ".models")
    args = parser.parse_args()

    from devkit.receipts import receipt
    from idp.contract.jobs import JobOptions
    from idp.contract.names import OcrModel
    from idp.document.ocr.models.cache import ModelCache
    from idp.document.ocr.pipeline import ocr_document
    from idp.document.ocr.registry import EngineRegistry
    from idp.document.ocr.settings import EngineSettings
    from idp.document.ocr.steps import tiles

    cache = ModelCache(
        s3=None, bucket=None, local_root=Path(tempfile.mkdtemp()), search_roots=[args.models_dir]
    )
    registry = EngineRegistry(
        resolve=cache.fetch, settings=EngineSettings(cpu_threads=2), max_engines=2
    )
    rows: list[dict[str, Any]] = []
    folder = Path(tempfile.mkdtemp(prefix="receipts-"))
    for seed, items in RECEIPTS:
        made = receipt(seed, items)
        path = folder / f"receipt-{seed}.png"
        made.image.save(path)
        data = path.read_bytes()
        size = f"{made.image.width}×{made.image.height}"
        for model in (OcrModel.PP_OCRV5, OcrModel.PP_OCRV6):
            reader = registry.get(model, "en", JobOptions())
            for tiled in (True, False):
                # Whole page: no page counts as tall, so the detector sees it in one piece, as
                # before tiles (its input limit, and the verdict's view of it, unchanged).
                tall = tiles.TALL if tiled else float("inf")
                started = time.perf_counter()
                with mock.patch.object(tiles, "TALL", tall):
                    done = ocr_document(data, engine=reader, options=JobOptions())
                seconds = time.perf_counter() - started
                page = done.pages[0]
                quality = page.quality
                rows.append(
                    {
                        "receipt": size,
                        "engine": f"{model.value} {'tiled' if tiled else 'whole page'}",
                        **_score([line.text for line in page.lines], made.lines, made.items),
                        "verdict": quality.verdict if quality else None,
                        "reasons": [str(reason) for reason in quality.reasons] if quality else [],
                        "seconds": round(seconds, 2),
                    }
                )
        started = time.perf_counter()
        text = subprocess.run(
            ["tesseract", str(path), "stdout", "-l", "eng", "--psm", "4"],
            capture_output=True,
            text=True,
            check=True,
            env={"OMP_THREAD_LIMIT": "2", "PATH": "/usr/bin:/bin"},
        ).stdout
        lines = [line for line in text.splitlines() if line.strip()]
        rows.append(
            {
                "receipt": size,
                "engine": "Tesseract 5 --psm 4",
                **_score(lines, made.lines, made.items),
                "verdict": None,
                "reasons": [],
                "seconds": round(time.perf_counter() - started, 2),
            }
        )
        print(f"read receipt {size}", flush=True)
    summary, table = _summarize(rows)
    print(table)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    report = {"receipts": len(RECEIPTS), "summary": summary, "table": table, "rows": rows}
    write_results(report, args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
