"""PP-StructureV3 inside the OCR processor image: cold start, seconds per page and peak memory on
real table pages, two-column papers and forms, under the function's memory limit.

    .venv/bin/python -m benchmarks.structure_image [--image paddle-idp-ocr:image-test]
        [--pages ID-SUBSTRING ...] [--memory-mb 4096] [--cpus 2] [--text-model PP-OCRv5]

Each page is a PNG benchmarks/structure_corpus.py renders (its tables, forms and two-column
papers), or a born-digital page of the table corpus as a PDF of its own, read in a container
of the image started
for the run (`docker run --memory`, the image's own Python and packages, the offline weights
mounted read-only as its model cache), the way the processor reads a page: the registry's
PP-StructureV3 engine and `ocr_document`. Cold start is the container's process start to its
engine being ready; each page is then timed from its bytes to its result, and the process's
peak RSS read after each. One run, figures never asserted; printed as a table and written to
benchmarks/results/structure_image.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "benchmarks" / "results" / "structure_image.json"
DEFAULT_IMAGE = "paddle-idp-ocr:image-test"
# The pages measured: (corpus, page id) and what kind of page it is.
KINDS = ("table", "two-column paper", "form", "born-digital table")
# Born-digital pages measured: every this many of the table corpus's pages, as the PDF page
# itself (its text and tables from its layer).
BORN_DIGITAL_EVERY = 5


def child(pages_dir: Path, text_model: str | None) -> None:
    """Inside the image: build the engine, read every page, print one JSON report."""
    started = time.perf_counter()
    from idp.contract.jobs import JobOptions
    from idp.contract.names import OcrModel
    from idp.document.ocr.models.cache import ModelCache
    from idp.document.ocr.paddle.environment import prepare_paddle_environment
    from idp.document.ocr.pipeline import ocr_document
    from idp.document.ocr.registry import EngineRegistry
    from idp.document.ocr.settings import EngineSettings
    from idp.document.text_layer.page import page_layer

    prepare_paddle_environment()
    cache = ModelCache(search_roots=[Path(os.environ["IDP_MODELS_DIR"])])
    registry = EngineRegistry(resolve=cache.fetch, settings=EngineSettings())
    options = JobOptions(text_model=OcrModel(text_model) if text_model else None)
    reader = registry.get(OcrModel.PP_STRUCTUREV3, "en", options)
    ready = time.perf_counter() - started
    rows = []
    for path in sorted([*pages_dir.glob("*.png"), *pages_dir.glob("*.pdf")]):
        layer = page_layer if path.suffix == ".pdf" else None
        tick = time.perf_counter()
        outcome = ocr_document(path.read_bytes(), engine=reader, options=options, page_layer=layer)
        seconds = time.perf_counter() - tick
        (page,) = outcome.pages
        rows.append(
            {
                "page": path.stem,
                "seconds": round(seconds, 2),
                "pixels": [page.width, page.height],
                "blocks": len(page.blocks),
                "tables": sum(block.type == "table" for block in page.blocks),
                "verdict": page.quality.verdict if page.quality else None,
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            }
        )
    print(
        json.dumps(
            {"cold_start_s": round(ready, 2), "engine": reader.info.model_dump(), "pages": rows}
        )
    )


def chosen_pages(wanted: list[str]) -> list[tuple[str, Path]]:
    """(kind, PNG) of each page measured, as benchmarks/structure_corpus.py renders it."""
    from benchmarks import structure_corpus
    from benchmarks.corpora import structure_pages

    found: list[tuple[str, Path]] = []
    for page in structure_pages():
        if wanted and not any(s in page.id for s in wanted):
            continue
        kinds = set(page.kinds)
        kind = (
            "form"
            if "form" in kinds
            else "table"
            if "table" in kinds
            else "two-column paper"
            if "multi-column" in kinds
            else None
        )
        if kind is not None:
            found.append((kind, structure_corpus.prepare(page).image))
    return found + born_digital_pages(wanted)


def born_digital_pages(wanted: list[str]) -> list[tuple[str, Path]]:
    """("born-digital table", PDF) of every BORN_DIGITAL_EVERY-th table corpus page, each cut
    out of its document as a PDF of its own."""
    import pypdfium2  # type: ignore[import-untyped]

    from benchmarks.corpora import table_pages
    from benchmarks.corpora.fetch import source_path

    staging = REPO_ROOT / ".cache" / "structure_image_pdf"
    staging.mkdir(parents=True, exist_ok=True)
    found: list[tuple[str, Path]] = []
    for page in table_pages()[::BORN_DIGITAL_EVERY]:
        if wanted and not any(s in page.id for s in wanted):
            continue
        target = staging / f"{page.id}.pdf"
        document = pypdfium2.PdfDocument(str(source_path(page.source)))
        single = pypdfium2.PdfDocument.new()
        single.import_pages(document, [page.page - 1])
        single.save(str(target))
        single.close()
        document.close()
        found.append(("born-digital table", target))
    return found


def run_image(
    image: str, pages: list[tuple[str, Path]], args: argparse.Namespace
) -> dict[str, Any]:
    staging = REPO_ROOT / ".cache" / "structure_image"
    staging.mkdir(parents=True, exist_ok=True)
    for old in [*staging.glob("*.png"), *staging.glob("*.pdf")]:
        old.unlink()
    kinds = {}
    for kind, path in pages:
        target = staging / path.name
        target.write_bytes(path.read_bytes())
        kinds[path.stem] = kind
    models = Path(os.environ.get("IDP_MODELS_DIR", REPO_ROOT / ".models")).resolve()
    command = [
        "docker", "run", "--rm", "--network", "none",
        "--memory", f"{args.memory_mb}m", "--cpus", str(args.cpus),
        "--read-only", "--tmpfs", "/tmp:rw,exec,size=6144m", "--user", "993:990",
        "-e", "IDP_MODELS_DIR=/models", "-e", "PADDLE_PDX_CACHE_HOME=/tmp/paddlex",
        "-v", f"{models}:/models:ro", "-v", f"{staging}:/pages:ro",
        "-v", f"{Path(__file__).resolve()}:/bench/structure_image.py:ro",
        "--entrypoint", "python", image, "/bench/structure_image.py", "--child",
    ]  # fmt: skip
    if args.text_model:
        command += ["--text-model", args.text_model]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the image's run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    for row in report["pages"]:
        row["kind"] = kinds.get(row["page"], "?")
    return report


def table(report: dict[str, Any]) -> str:
    lines = [
        "| kind | pages | median s/page | max s/page | peak RSS (MB) |",
        "|---|---|---|---|---|",
    ]
    for kind in KINDS:
        rows = [row for row in report["pages"] if row["kind"] == kind]
        if rows:
            seconds = [row["seconds"] for row in rows]
            lines.append(
                f"| {kind} | {len(rows)} | {statistics.median(seconds):.1f} | {max(seconds):.1f} "
                f"| {max(row['peak_rss_mb'] for row in rows)} |"
            )
    every = [row["seconds"] for row in report["pages"]]
    lines.append(
        f"| all | {len(every)} | {statistics.median(every):.1f} | {max(every):.1f} "
        f"| {max(row['peak_rss_mb'] for row in report['pages'])} |"
    )
    return (
        "\n".join(lines)
        + f"\n\ncold start (process start → engine ready): {report['cold_start_s']} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--image", default=DEFAULT_IMAGE)
    parser.add_argument("--pages", nargs="*", default=[])
    parser.add_argument("--memory-mb", type=int, default=4096)
    parser.add_argument("--cpus", type=float, default=2.0)
    parser.add_argument("--text-model", default=None)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.child:
        child(Path("/pages"), args.text_model)
        return
    pages = chosen_pages(args.pages)
    load = os.getloadavg()[0]
    report = run_image(args.image, pages, args)
    report["run"] = {
        "image": args.image,
        "memory_mb": args.memory_mb,
        "cpus": args.cpus,
        "load_average_1m": [round(load, 2), round(os.getloadavg()[0], 2)],
    }
    print(table(report))
    from benchmarks.reporting import write_results  # not in the image: the child runs alone

    write_results(report, args.output)
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
