"""PP-StructureV3's table stage on real weights (SLANet_plus), cell by cell, on real tables.

    .venv/bin/python -m benchmarks.table_cells [--ocr PP-OCRv6 PP-OCRv5] [--output FILE]

The tables are tabula-py's test PDFs (tabula-py 2.10.0 sdist on PyPI; files and provenance in
tests/samples/tables/): a ruled table (R's mtcars, 33 rows x 12 columns), two
without ruling lines (a 24 x 6 grid of numbers set as two side-by-side blocks; the first 20
rows of a Spanish campaign-donor list, accented names) and the ruled table again as a damaged
flatbed scan (benchmarks.real_corpus.damaged_scan: 200 dpi grey, 0.4 degree skew, blur, noise,
JPEG). Each is cropped to its table, as PP-StructureV3's layout model would crop it (no wheel
carries that model), read by devkit.table_stage (PaddleX's table recognition: SLANet_plus and
an offline OCR model), converted by the PP-StructureV3 job's own code, and scored against what
the table holds: tabula-py's expected CSV for the file.
Prints a table and writes JSON (benchmarks/results/table_cells.json).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.corpora import TableCase, table_cases
from benchmarks.corpora.fetch import REPO_ROOT
from benchmarks.real_corpus import damaged_scan
from benchmarks.reporting import write_results
from devkit.table_stage import TableScore, TableStage, html_grid, score_table
from idp.contract.names import OcrModel

SAMPLES = REPO_ROOT / "tests" / "samples" / "tables"
DEFAULT_OUTPUT = REPO_ROOT / "benchmarks" / "results" / "table_cells.json"
# Around the table's ink, as PP-DocLayout's boxes leave a little white around a table.
DEFAULT_MARGIN_PT = 4.0


def table_box(
    grey: np.ndarray[Any, np.dtype[np.uint8]], area: tuple[int, int, int, int], margin: int
) -> tuple[int, int, int, int]:
    """The table's box as a layout model draws it: the ink inside `area` (the part of the page
    that holds the table and nothing else), grown by `margin` pixels on each side."""
    left, top, right, bottom = area
    ys, xs = np.nonzero(grey[top:bottom, left:right] < 160)
    if not len(xs):
        return area
    height, width = grey.shape
    return (
        max(left + int(xs.min()) - margin, 0),
        max(top + int(ys.min()) - margin, 0),
        min(left + int(xs.max()) + 1 + margin, width),
        min(top + int(ys.max()) + 1 + margin, height),
    )


def table_image(
    case: TableCase, margin_pt: float = DEFAULT_MARGIN_PT
) -> np.ndarray[Any, np.dtype[np.uint8]]:
    """The case's table as an RGB image: its page rendered (and scanned, if so), cropped to
    the table's ink with a margin, as a layout box crops it."""
    import pypdfium2  # type: ignore[import-untyped]
    from PIL import Image

    document = pypdfium2.PdfDocument(str(SAMPLES / case.pdf))
    try:
        page = document[0].render(scale=case.dpi / 72.0, grayscale=case.damage is not None)
        image: Image.Image = page.to_pil()
    finally:
        document.close()
    offset = (0.0, 0.0)
    if case.damage is not None:
        clean = image.convert("L")
        scan = damaged_scan(clean, case.damage)
        buffer = io.BytesIO()
        scan.save(buffer, "JPEG", quality=case.damage.jpeg_quality)
        # The skew turned the page about its centre and grew it: the table moved with it.
        offset = ((scan.width - clean.width) / 2, (scan.height - clean.height) / 2)
        image = Image.open(io.BytesIO(buffer.getvalue()))
    scale = case.dpi / 72.0
    left, top, right, bottom = case.region
    area = (
        int(left * scale + offset[0]),
        int(top * scale + offset[1]),
        int(right * scale + offset[0]),
        int(bottom * scale + offset[1]),
    )
    grey = np.asarray(image.convert("L"), dtype=np.uint8)
    box = table_box(grey, area, round(margin_pt * scale))
    return np.asarray(image.convert("RGB").crop(box), dtype=np.uint8)


def truth_of(case: TableCase) -> list[list[str]]:
    with (SAMPLES / case.truth).open(encoding="utf-8", newline="") as handle:
        return [list(row) for row in csv.reader(handle)]


@dataclass(frozen=True)
class TableReading:
    case: str
    kind: str
    ocr: str
    margin_pt: float
    seconds: float
    score: TableScore
    html: str | None
    lines: list[str]  # the page's lines, as the job's text has them


def read_case(
    stage: TableStage, case: TableCase, margin_pt: float = DEFAULT_MARGIN_PT
) -> TableReading:
    image = table_image(case, margin_pt)
    started = time.perf_counter()
    content = stage.read(image)
    seconds = time.perf_counter() - started
    tables = [block.html for block in content.blocks if block.type == "table" and block.html]
    html = tables[0] if tables else None
    score = score_table(html_grid(html) if html else [], truth_of(case))
    lines = [line.text for line in content.lines]
    return TableReading(
        case.name, case.kind, stage.ocr.value, margin_pt, seconds, score, html, lines
    )


def _row(reading: TableReading) -> str:
    s = reading.score
    return (
        f"| {reading.case} ({reading.kind}) | {reading.ocr} | {reading.margin_pt:g} pt "
        f"| {s.rows}x{s.columns} / "
        f"{s.true_rows}x{s.true_columns} | {s.empty_rows} / {s.empty_columns} "
        f"| {s.exact}/{s.cells} "
        f"**{s.cell_accuracy:.1%}** | {s.cell_recall:.1%} | {reading.seconds:.1f} s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ocr", nargs="+", default=["PP-OCRv6", "PP-OCRv5"])
    parser.add_argument("--models-dir", type=Path, default=REPO_ROOT / ".models")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument(
        "--margins",
        nargs="+",
        type=float,
        default=[DEFAULT_MARGIN_PT],
        help="white around the table's ink, in points (several: how the crop moves the result)",
    )
    args = parser.parse_args()
    readings: list[TableReading] = []
    print(
        "| table | OCR | margin | rows x columns (read / true) | empty rows / columns | "
        "cells exact | "
        "cell texts found | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in args.ocr:
        stage = TableStage.build(args.models_dir, ocr=OcrModel(name))
        for margin in args.margins:
            for case in table_cases():
                reading = read_case(stage, case, margin)
                readings.append(reading)
                print(_row(reading), flush=True)
    summary = {
        name: {
            "cells": sum(r.score.cells for r in readings if r.ocr == name),
            "exact": sum(r.score.exact for r in readings if r.ocr == name),
            "median_seconds": statistics.median(r.seconds for r in readings if r.ocr == name),
        }
        for name in args.ocr
    }
    readings_json = [{**asdict(r), "cell_accuracy": r.score.cell_accuracy} for r in readings]
    write_results({"readings": readings_json, "summary": summary}, args.output)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
