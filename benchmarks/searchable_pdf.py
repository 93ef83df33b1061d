"""What result.pdf costs: time per page and peak memory growth, for 10 and 100 pages.

    python benchmarks/searchable_pdf.py [--pages 10 100] [--out FILE.json]

A 1700×2200 page of 30 known lines is OCR'd once with the real PP-OCRv5 engine (offline weights,
IDP_MODELS_DIR); its recognized lines are the text layer of every page. Each case then runs in a
fresh interpreter that imports only the writer (as a processor's memory would look after OCR):
it reads the input, notes its RSS, writes the searchable PDF to a temporary file and reports the
time and how far its peak RSS rose above that. Cases: a scanned PDF (JPEG pages at 200 dpi, the
usual scanner output: pages are copied), a multi-page TIFF (pages losslessly Flate-encoded) and
the chunked merge (10-page parts concatenated). Prints a table; writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PAGE_LINES = 30
DPI = 200
PART_PAGES = 10


def probe(case: str, input_path: Path, pages_path: Path, page_count: int) -> None:
    """Child: write one searchable PDF and print a JSON line with its cost."""
    from idp.contract.results import PageResult
    from idp.document.searchable_pdf import concatenate_pdfs, write_searchable_pdf

    template = PageResult.model_validate_json(pages_path.read_text())
    pages = [template.model_copy(update={"page": n}) for n in range(1, page_count + 1)]
    # The merge reads parts (a folder of them); the others read the input.
    data = b"" if case == "merge" else input_path.read_bytes()
    rss_before = _rss_kib()
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "result.pdf"
        tick = time.perf_counter()
        if case == "merge":
            parts = sorted(input_path.glob("*.pdf"))
            with out.open("wb") as file:
                written = concatenate_pdfs((part.open("rb") for part in parts), file)
        else:
            with out.open("wb") as file:
                written = write_searchable_pdf(data, pages, file)
        seconds = time.perf_counter() - tick
        size = out.stat().st_size
    print(
        json.dumps(
            {
                "pages": written,
                "seconds": seconds,
                "rss_before_kib": rss_before,
                "peak_rss_kib": _rss_peak_kib(),
                "output_bytes": size,
            }
        )
    )


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    raise LookupError(field)


def _rss_kib() -> int:
    return _status_kib("VmRSS")


def _rss_peak_kib() -> int:
    # VmHWM, not getrusage's ru_maxrss: a child started by fork + exec inherits its parent's
    # ru_maxrss (here a process holding an OCR engine), while VmHWM starts with the new image.
    return _status_kib("VmHWM")


def recognized_page(work: Path) -> tuple[Any, Any]:
    """One page image and its lines as the real PP-OCRv5 engine reads them."""
    from devkit import synthetic
    from idp.contract.jobs import JobOptions
    from idp.contract.names import OcrModel
    from idp.document.ocr.models.cache import ModelCache
    from idp.document.ocr.paddle.environment import prepare_paddle_environment
    from idp.document.ocr.pipeline import ocr_document
    from idp.document.ocr.registry import EngineRegistry
    from idp.document.ocr.settings import EngineSettings

    prepare_paddle_environment()
    models = Path(os.environ.get("IDP_MODELS_DIR", ".models"))
    cache = ModelCache(search_roots=[models])
    engine = EngineRegistry(resolve=cache.fetch, settings=EngineSettings()).get(
        OcrModel.PP_OCRV5, "en", JobOptions()
    )
    image = synthetic.render_page(synthetic.sample_lines(PAGE_LINES), font_size=34)
    outcome = ocr_document(
        synthetic.encode(image, "PNG"), engine=engine, options=JobOptions(), max_pages=1
    )
    (page,) = outcome.pages
    (work / "page.json").write_text(page.model_dump_json())
    return image, page


def build_inputs(image: Any, page_count: int, work: Path) -> dict[str, Path]:
    """A scanned PDF (JPEG pages) and a TIFF of `page_count` copies of the page."""
    inputs = {}
    scanned = work / f"scan-{page_count}.pdf"
    # Rendered at 2× the PDF's 72 dpi grid the result pixel space is 2×; boxes are scaled to it.
    frames = (image.copy() for _ in range(page_count - 1))
    image.save(scanned, "PDF", save_all=True, append_images=frames, resolution=DPI, quality=85)
    inputs["scanned-pdf"] = scanned
    tiff = work / f"scan-{page_count}.tiff"
    grey = image.convert("L")
    grey.save(
        tiff,
        "TIFF",
        save_all=True,
        append_images=[grey.copy() for _ in range(page_count - 1)],
        dpi=(DPI, DPI),
        compression="tiff_deflate",
    )
    inputs["tiff"] = tiff
    return inputs


def write_parts(scanned: Path, page: Any, page_count: int, work: Path) -> Path:
    """The chunks' searchable parts of the scanned PDF, PART_PAGES pages each."""
    from idp.document.searchable_pdf import write_searchable_pdf

    folder = work / f"parts-{page_count}"
    folder.mkdir()
    data = scanned.read_bytes()
    for index, first in enumerate(range(1, page_count + 1, PART_PAGES)):
        count = min(PART_PAGES, page_count - first + 1)
        chunk = [page.model_copy(update={"page": first + n}) for n in range(count)]
        with (folder / f"{index:05d}.pdf").open("wb") as file:
            write_searchable_pdf(data, chunk, file, first_page=first)
    return folder


def run_case(case: str, input_path: Path, pages_path: Path, page_count: int) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--probe",
            case,
            str(input_path),
            str(pages_path),
            str(page_count),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    report["case"] = case
    report["input_bytes"] = (
        sum(part.stat().st_size for part in input_path.glob("*.pdf"))
        if input_path.is_dir()
        else input_path.stat().st_size
    )
    report["ms_per_page"] = round(report["seconds"] * 1000 / page_count, 2)
    report["peak_growth_mib"] = round(
        max(0, report["peak_rss_kib"] - report["rss_before_kib"]) / 1024, 1
    )
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/searchable_pdf.json"))
    parser.add_argument("--probe", nargs=4, metavar=("CASE", "INPUT", "PAGE_JSON", "PAGES"))
    args = parser.parse_args()
    if args.probe:
        case, input_path, pages_path, count = args.probe
        probe(case, Path(input_path), Path(pages_path), int(count))
        return

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        image, page = recognized_page(work)
        print(f"OCR'd the page: {len(page.lines)} lines", file=sys.stderr)
        for page_count in args.pages:
            inputs = build_inputs(image, page_count, work)
            # The processor renders a PDF page at 2× (144 dpi), not at the scan's 200 dpi: the
            # scanned PDF's result pixel space is the page scaled by 144/200.
            pdf_page = _scaled(page, 144 / DPI)
            scanned_page = work / "page-pdf.json"
            scanned_page.write_text(pdf_page.model_dump_json())
            parts = write_parts(inputs["scanned-pdf"], pdf_page, page_count, work)
            cases = [
                ("scanned-pdf", inputs["scanned-pdf"], scanned_page),
                ("tiff", inputs["tiff"], work / "page.json"),
                ("merge", parts, scanned_page),
            ]
            for case, input_path, pages_path in cases:
                row = run_case(case, input_path, pages_path, page_count)
                rows.append(row)
                print(
                    f"{case:12} {page_count:4d} pages  {row['ms_per_page']:7.2f} ms/page  "
                    f"peak +{row['peak_growth_mib']:6.1f} MiB",
                    file=sys.stderr,
                )
    print()
    print(
        f"{'case':12} {'pages':>5} {'ms/page':>9} {'peak RSS growth':>16} "
        f"{'in MiB':>7} {'out MiB':>8}"
    )
    for row in rows:
        print(
            f"{row['case']:12} {row['pages']:5d} {row['ms_per_page']:9.2f} "
            f"{row['peak_growth_mib']:13.1f} MiB {row['input_bytes'] / 2**20:7.1f} "
            f"{row['output_bytes'] / 2**20:8.1f}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "benchmark": "searchable_pdf",
                "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
                "page": {"pixels": list(image.size), "lines": len(page.lines), "dpi": DPI},
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"\nwrote {args.out}")


def _scaled(page: Any, scale: float) -> Any:
    from idp.contract.results import Line

    width, height = round(page.width * scale), round(page.height * scale)
    lines = [
        Line(
            text=line.text,
            box=tuple((x * scale, y * scale) for x, y in line.box),
            confidence=line.confidence,
        )
        for line in page.lines
    ]
    return page.model_copy(update={"width": width, "height": height, "lines": lines})


if __name__ == "__main__":
    main()
