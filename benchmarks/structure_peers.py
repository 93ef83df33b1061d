"""The peer of benchmarks/structure.py: img2table 2.0 (PyPI, OpenCV table detection) with
Tesseract 5 (Debian `tesseract-ocr`) reading the cells, and Tesseract alone (`--psm 3`) reading
the page's text, on the same PNG every engine is given (benchmarks/structure_corpus.py).

    .venv/bin/python -m benchmarks.structure_peers [--pages ID-SUBSTRING ...] [--output FILE]

Run as a script, it prepares the corpus, reads every page with the peer and prints per-page
TEDS, TEDS-struct, cell-adjacency F1 (benchmarks/structure_scoring.py) and CER with medians,
and writes JSON (default .cache/structure/peers.json). Figures from one run, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from benchmarks.corpora import structure_pages
from benchmarks.structure_corpus import CACHE_DIR, PreparedStructurePage, prepare
from benchmarks.structure_scoring import (
    Box,
    Grid,
    PageTable,
    PageTablesScore,
    html_of_grid,
    page_cer,
    score_page_tables,
)

THREADS: Final = 2  # Tesseract's threads (OMP_THREAD_LIMIT), as benchmarks/real_documents.py
DEFAULT_OUTPUT = CACHE_DIR / "peers.json"


@dataclass(frozen=True)
class Img2TableSettings:
    """img2table's extraction options: its defaults, but for borderless tables, which the
    corpus has and img2table skips by default. On the tuning pages, splitting implicit rows
    and columns changed no table."""

    implicit_rows: bool = False
    implicit_columns: bool = False
    borderless_tables: bool = True
    min_confidence: int = 50  # Tesseract word confidence below which a word is dropped
    psm: int = 11  # img2table's default: sparse text, every word found wherever it lies


@dataclass(frozen=True)
class PeerTable:
    """A table as img2table gives it: its grid, its HTML and its box in the image's pixels."""

    grid: Grid
    html: str
    bbox: Box


@dataclass(frozen=True)
class PeerReading:
    """What the peer read on one page, and how long each part took."""

    tables: tuple[PeerTable, ...]
    text: str
    table_seconds: float  # img2table, its Tesseract calls included
    text_seconds: float  # one Tesseract process, --psm 3
    settings: dict[str, Any] = field(default_factory=dict)
    review: tuple[str, ...] | None = None  # the page's review reasons; None: the peer gives none


def grid_of_cells(rows: Sequence[Sequence[Any]]) -> Grid:
    """img2table's rows of cells as a grid: a cell spanning several slots appears in each of
    them (the same TableCell), so every slot but its first (top-left) is None."""
    grid: Grid = []
    for r, row in enumerate(rows):
        line: list[str | None] = []
        for c, cell in enumerate(row):
            left = c > 0 and row[c - 1] is cell
            above = r > 0 and c < len(rows[r - 1]) and rows[r - 1][c] is cell
            line.append(None if left or above else " ".join((cell.value or "").split()))
        grid.append(line)
    return grid


def _tesseract_ocr(psm: int) -> Any:
    """img2table's TesseractOCR, less the words it parsed as no text. Its hOCR parser gives
    a word that is only rule-like marks ("|", "_", ";") the value None, which its table code
    then writes into the cell as the string "None" (img2table 2.0.0, OCRData.get_text_table);
    such words are dropped here, as the parser meant them to be."""
    from img2table.ocr import TesseractOCR
    from img2table.ocr._types import OCRData

    class WordsWithText(TesseractOCR):  # type: ignore[misc]
        def of(self, document: Any) -> Any:
            data = super().of(document)
            if data is None:
                return None
            records = {
                page: kept
                for page, words in data.records.items()
                if (kept := [word for word in words if word["value"] is not None])
            }
            return OCRData(records=records) if records else None

    return WordsWithText(n_threads=1, lang="eng", psm=psm)


def _peer_tables(found: Sequence[Any]) -> tuple[PeerTable, ...]:
    """img2table's extracted tables as grids with their HTML and boxes."""
    tables = []
    for table in found:
        grid = grid_of_cells(list(table.content.values()))
        box = table.bbox
        tables.append(PeerTable(grid, html_of_grid(grid), (box.x1, box.y1, box.x2, box.y2)))
    return tuple(tables)


class Img2TableTesseract:
    """img2table over Tesseract, kept for all pages (it checks Tesseract once)."""

    def __init__(self, settings: Img2TableSettings | None = None) -> None:
        self.settings = settings or Img2TableSettings()
        self.ocr = _tesseract_ocr(self.settings.psm)
        self.ocr.env["OMP_THREAD_LIMIT"] = str(THREADS)

    def tables(self, image: Path) -> tuple[PeerTable, ...]:
        from img2table.document import Image

        document = Image(src=str(image), detect_rotation=False)
        return _peer_tables(self._extract(document))

    def _extract(self, document: Any) -> Any:
        """img2table's tables of an Image or PDF document, with these settings."""
        return document.extract_tables(
            ocr=self.ocr,
            implicit_rows=self.settings.implicit_rows,
            implicit_columns=self.settings.implicit_columns,
            borderless_tables=self.settings.borderless_tables,
            min_confidence=self.settings.min_confidence,
        )

    def read_pdf(self, source: Path, number: int) -> PeerReading:
        """img2table on the born-digital page itself, its cells from the PDF's text layer
        (pdf_text_extraction; Tesseract only where the page has no text); its boxes at
        img2table's 200 dpi, settings["scale"] pixels per point; the page's text, the layer's."""
        import pypdfium2  # type: ignore[import-untyped]
        from img2table.document import PDF

        started = time.perf_counter()
        document = PDF(src=str(source), pages=[number - 1], pdf_text_extraction=True)
        tables = _peer_tables(self._extract(document).get(number - 1, []))
        table_seconds = time.perf_counter() - started
        started = time.perf_counter()
        pdf = pypdfium2.PdfDocument(str(source))
        try:
            text_page = pdf[number - 1].get_textpage()
            text = text_page.get_text_range()
            text_page.close()
        finally:
            pdf.close()
        settings = {**asdict(self.settings), "scale": 200 / 72}
        return PeerReading(
            tuple(tables), text, table_seconds, time.perf_counter() - started, settings
        )

    def read(self, image: Path) -> PeerReading:
        started = time.perf_counter()
        tables = self.tables(image)
        table_seconds = time.perf_counter() - started
        started = time.perf_counter()
        text = tesseract_text(image)
        text_seconds = time.perf_counter() - started
        return PeerReading(tables, text, table_seconds, text_seconds, asdict(self.settings))


def tesseract_text(image: Path) -> str:
    """Tesseract's text of the image, default layout analysis (--psm 3); one process."""
    env = {**os.environ, "OMP_THREAD_LIMIT": str(THREADS)}
    done = subprocess.run(
        ["tesseract", str(image), "stdout", "-l", "eng", "--psm", "3"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return done.stdout.replace("\f", "").strip()


# ------------------------------------------------------------------------------- the driver
@dataclass(frozen=True)
class PeerPageResult:
    page: str
    held_out: bool
    kinds: tuple[str, ...]
    tables: PageTablesScore
    cer: float
    table_seconds: float
    text_seconds: float
    split: str | None = None  # the table corpus's part (dev, test); None for the structure corpus
    review: tuple[str, ...] | None = None  # the page's review reasons; None: the peer gives none
    failed: str | None = None  # why the engine read nothing (it raised)


def score_reading(
    prepared: PreparedStructurePage, reading: PeerReading, *, pdf_scale: float | None = None
) -> PeerPageResult:
    """The reading scored against the page's truth; `pdf_scale`, for a reading of the PDF page
    itself, the pixels per point its boxes are in (else the damaged scan's pixels)."""
    truth = [
        PageTable(
            table.grid,
            table.bbox_px
            if pdf_scale is None
            else (
                table.bbox_pt[0] * pdf_scale,
                table.bbox_pt[1] * pdf_scale,
                table.bbox_pt[2] * pdf_scale,
                table.bbox_pt[3] * pdf_scale,
            ),
        )
        for table in prepared.tables
    ]
    found = [PageTable(table.grid, table.bbox) for table in reading.tables]
    page = prepared.page
    return PeerPageResult(
        page=page.id,
        held_out=page.held_out,
        kinds=page.kinds,
        tables=score_page_tables(found, truth),
        cer=page_cer(prepared.text, reading.text, strip_leaders=page.strip_leaders),
        table_seconds=reading.table_seconds,
        text_seconds=reading.text_seconds,
        split=page.split,
        review=reading.review,
        failed=reading.settings.get("failed"),
    )


def _figure(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _row(result: PeerPageResult) -> str:
    score = result.tables
    shapes = ", ".join(
        f"{t.truth_shape[0]}x{t.truth_shape[1]}→"
        + (f"{t.predicted_shape[0]}x{t.predicted_shape[1]}" if t.predicted_shape else "none")
        for t in score.tables
    )
    return (
        f"| {result.page} | {'held out' if result.held_out else 'tuning'} "
        f"| {len(score.tables)} / {score.predicted} | {shapes or '–'} "
        f"| {_figure(score.teds)} | {_figure(score.teds_struct)} "
        f"| {_figure(score.adjacency.f1 if score.scored else None)} | {result.cer:.3f} "
        f"| {result.table_seconds:.1f} | {result.text_seconds:.1f} |"
    )


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def summarize(results: Sequence[PeerPageResult]) -> dict[str, Any]:
    """Medians per page: table figures over pages with true tables, CER over all pages,
    for the held-out pages, the tuning pages and all."""
    groups = {
        "held_out": [r for r in results if r.held_out],
        "tuning": [r for r in results if not r.held_out],
        "all": list(results),
    }
    summary: dict[str, Any] = {}
    for name, group in groups.items():
        tabled = [r for r in group if r.tables.scored]
        summary[name] = {
            "pages": len(group),
            "table_pages": len(tabled),
            "teds_median": _median([r.tables.teds for r in tabled]),
            "teds_struct_median": _median([r.tables.teds_struct for r in tabled]),
            "adjacency_f1_median": _median([r.tables.adjacency.f1 for r in tabled]),
            "cer_median": _median([r.cer for r in group]),
            "table_seconds_median": _median([r.table_seconds for r in group]),
            "text_seconds_median": _median([r.text_seconds for r in group]),
        }
    return summary


def _as_json(result: PeerPageResult) -> dict[str, Any]:
    score = result.tables
    return {
        **asdict(result),
        "teds": score.teds,
        "teds_struct": score.teds_struct,
        "adjacency_f1": score.adjacency.f1 if score.scored else None,
        "adjacency_precision": score.adjacency.precision if score.scored else None,
        "adjacency_recall": score.adjacency.recall if score.scored else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", nargs="*", default=[], help="page-id substrings")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args()
    peer = Img2TableTesseract()
    results: list[PeerPageResult] = []
    print(
        "| page | set | tables true / found | rows x columns (true → found) | TEDS | TEDS-struct "
        "| adjacency F1 | CER | s tables | s text |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for page in structure_pages():
        if args.pages and not any(part in page.id for part in args.pages):
            continue
        prepared = prepare(page)
        result = score_reading(prepared, peer.read(prepared.image))
        results.append(result)
        print(_row(result), flush=True)
    summary = summarize(results)
    for name, figures in summary.items():
        print(
            f"{name}: {figures['pages']} pages ({figures['table_pages']} with tables): median "
            f"TEDS {_figure(figures['teds_median'])}, "
            f"TEDS-struct {_figure(figures['teds_struct_median'])}, "
            f"adjacency F1 {_figure(figures['adjacency_f1_median'])}, "
            f"CER {_figure(figures['cer_median'])}, "
            f"s/page tables {_figure(figures['table_seconds_median'])}, "
            f"text {_figure(figures['text_seconds_median'])}"
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {
                "peer": "img2table 2.0.0 + Tesseract",
                "settings": asdict(peer.settings),
                "pages": [_as_json(r) for r in results],
                "summary": summary,
            },
            indent=2,
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
