"""Office documents: per format, how long LibreOffice takes to convert a real document, its pages,
LibreOffice's peak memory, and the CER of the text the pipeline reads from the PDF's text layer
against the document's own text (python-docx, python-pptx, openpyxl, odfpy). With --image, the
converter image's size, its LibreOffice layer, and a cold and a warm conversion inside it.

    cd benchmarks && ../.venv/bin/python office.py [--image paddle-idp-converter:image-test]
        [--processor-image paddle-idp-ocr:image-test]

The legacy and open formats (DOC, RTF, PPT, ODP, XLS, ODS) are the real samples saved in them by
LibreOffice, scored against their source's own text. Prints a table; writes JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.reporting import REPO_ROOT, write_results
from devkit.office_samples import SAMPLES, own_text, sample_bytes, sample_path, saved_as
from devkit.textmetrics import character_error_rate
from idp.contract.names import TextLayerMode
from idp.document.decode import open_document
from idp.document.media_types import detect_media_type
from idp.document.office.libreoffice import LibreOffice, soffice_path
from idp.document.office.sheets import with_sheet_tables
from idp.document.text_layer.page import read_page

RESULTS = REPO_ROOT / "benchmarks" / "results" / "office.json"
# Real samples, and (source sample, LibreOffice export) for the formats made from them.
DERIVED = {
    "doc": ("docx-hyperlinks", "doc:MS Word 97"),
    "rtf": ("docx-hyperlinks", "rtf"),
    "ppt": ("pptx-paragraphs", "ppt"),
    "odp": ("pptx-paragraphs", "odp"),
    "xls": ("xlsx-five-sheets", "xls:MS Excel 97"),
    "ods": ("xlsx-five-sheets", "ods"),
}


def _documents(folder: Path) -> dict[str, tuple[Path, Path]]:
    """name → (the file to convert, the file whose own text is its truth)."""
    documents = {key: (sample_path(key, folder), sample_path(key, folder)) for key in SAMPLES}
    for suffix, (source, export) in DERIVED.items():
        source_path = documents[source][0]
        written = folder / f"{source}.{suffix}"
        written.write_bytes(saved_as(source_path.read_bytes(), source_path.suffix, export, folder))
        documents[written.name] = (written, source_path)
    return documents


def _read_text(pdf: bytes, sheets: list[Any]) -> tuple[str, int, int]:
    """The text the pipeline reads from the PDF's text layer (a spreadsheet's: its cells), its
    pages, and how many of them would need OCR (no usable layer)."""
    from idp.contract.conversion import Sheet

    pages, ocr_pages = [], 0
    with open_document(pdf) as document:
        for number in range(1, document.page_count + 1):
            with document.pdf_page(number) as pdf_page:
                page = read_page(pdf_page, number, scale=2.0, mode=TextLayerMode.AUTO)
            if page is None:
                ocr_pages += 1
            else:
                pages.append(page)
        count = document.page_count
    if sheets:
        tabled = with_sheet_tables(pages, [Sheet.model_validate(s) for s in sheets])
        cells = [c.text for p in tabled for b in p.blocks for c in b.cells if c.text]
        return " ".join(cells), count, ocr_pages
    return " ".join(" ".join(page.text for page in pages).split()), count, ocr_pages


def _convert(path: Path, folder: Path, runs: int) -> dict[str, Any]:
    samples = []
    for _ in range(runs):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.office_measure",
                str(path),
                soffice_path(),
                str(folder / "out.pdf"),
                str(folder / "sheets.json"),
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO_ROOT,
            timeout=600,
        )
        samples.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {
        "seconds_median": round(statistics.median(s["seconds"] for s in samples), 2),
        "peak_rss_mb": round(max(s["peak_rss_mb"] for s in samples)),
        "pdf": (folder / "out.pdf").read_bytes(),
        "sheets": json.loads((folder / "sheets.json").read_text()),
    }


def _truth(path: Path) -> str:
    if path.suffix == ".xlsx":
        import openpyxl

        workbook = openpyxl.load_workbook(str(path), data_only=True)
        return " ".join(
            str(cell.value)
            for sheet in workbook.worksheets
            for row in sheet.iter_rows()
            for cell in row
            if cell.value is not None
        )
    return own_text(path)


def measure_documents(runs: int) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="office-bench-") as scratch:
        folder = Path(scratch)
        for name, (path, truth_path) in _documents(folder).items():
            data = path.read_bytes()
            media_type = detect_media_type(data)
            measured = _convert(path, folder, runs)
            read, pages, ocr_pages = _read_text(measured["pdf"], measured["sheets"])
            rows.append(
                {
                    "document": name,
                    "format": media_type.label,
                    "bytes": len(data),
                    "pages": pages,
                    "pages_needing_ocr": ocr_pages,
                    "convert_s_median": measured["seconds_median"],
                    "libreoffice_peak_rss_mb": measured["peak_rss_mb"],
                    "cer": round(character_error_rate(_truth(truth_path), read), 4),
                    "truth": truth_path.name,
                }
            )
            print(f"  {name}: {rows[-1]['convert_s_median']} s", file=sys.stderr)
    return rows


def _image_size_mb(image: str) -> float:
    size = subprocess.run(
        ["docker", "image", "inspect", image, "--format", "{{.Size}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return round(int(size) / 1e6)


def measure_image(image: str, processor_image: str | None) -> dict[str, Any]:
    """The converter image's size and LibreOffice layer; a conversion in a new container (cold:
    the container's start, Python's imports, LibreOffice's first start) and a second one in it
    (warm), under Lambda's read-only root, non-root user and the function's memory."""
    history = subprocess.run(
        [
            "docker",
            "history",
            image,
            "--no-trunc",
            "--human=false",
            "--format",
            "{{.Size}}\t{{.CreatedBy}}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    libreoffice_layer = max(
        (int(line.split("\t")[0]) for line in history if "libreoffice-core-nogui" in line),
        default=0,
    )
    script = (
        "import sys,time; t0=time.perf_counter(); "
        "from idp.document.media_types import detect_media_type; "
        "from idp.document.office.libreoffice import LibreOffice; "
        "from pathlib import Path; d=open('/data/doc.docx','rb').read(); "
        "o=LibreOffice(work_root=Path('/tmp')); "
        "o.convert(d, detect_media_type(d)); t1=time.perf_counter(); "
        "o.convert(d, detect_media_type(d)); t2=time.perf_counter(); "
        "print(t1-t0, t2-t1)"
    )
    with tempfile.TemporaryDirectory(prefix="office-image-") as scratch:
        Path(scratch, "doc.docx").write_bytes(sample_bytes("docx-hyperlinks"))
        Path(scratch).chmod(0o755)
        Path(scratch, "doc.docx").chmod(0o644)
        started = time.perf_counter()
        done = subprocess.run(
            [
                "docker",
                "run",
                "--rm",
                "--read-only",
                "--tmpfs",
                "/tmp:size=512m",
                "--user",
                "993:990",
                "--memory",
                "2048m",
                "-v",
                f"{scratch}:/data:ro",
                "--entrypoint",
                "python",
                image,
                "-c",
                script,
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        container_s = time.perf_counter() - started
    first, second = (float(x) for x in done.stdout.split())
    report: dict[str, Any] = {
        "image": image,
        "image_mb": _image_size_mb(image),
        "libreoffice_layer_mb": round(libreoffice_layer / 1e6),
        "cold_conversion_s": round(first, 2),
        "cold_with_container_start_s": round(container_s - second, 2),
        "warm_conversion_s": round(second, 2),
    }
    if processor_image:
        processor_mb = _image_size_mb(processor_image)
        report |= {
            "processor_image": processor_image,
            "processor_image_mb": processor_mb,
            "processor_with_libreoffice_mb": processor_mb + report["libreoffice_layer_mb"],
        }
    return report


def print_table(report: dict[str, Any]) -> None:
    print(
        f"{'document':34} {'format':6} {'pages':>5} {'ocr':>4} {'convert s':>9} "
        f"{'LO MB':>6} {'CER':>7}"
    )
    for row in report["documents"]:
        print(
            f"{row['document']:34} {row['format']:6} {row['pages']:>5} "
            f"{row['pages_needing_ocr']:>4} {row['convert_s_median']:>9} "
            f"{row['libreoffice_peak_rss_mb']:>6} {row['cer']:>7.2%}"
        )
    if report.get("image"):
        print(json.dumps(report["image"], indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--image", default=None, help="the converter image to measure")
    parser.add_argument("--processor-image", default=None, help="its size, for the comparison")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    office = LibreOffice(soffice=soffice_path())
    report: dict[str, Any] = {
        "libreoffice": office.version,
        "runs": args.runs,
        "documents": measure_documents(args.runs),
    }
    if args.image:
        report["image"] = measure_image(args.image, args.processor_image)
    print_table(report)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    write_results(report, args.output)
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
