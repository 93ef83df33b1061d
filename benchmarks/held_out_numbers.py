"""Numbers, dates and codes on real pages not tuned on, read by this pipeline's text-line models,
by Tesseract 5 and by RapidOCR, all on the same pixels.

    .venv/bin/python -m benchmarks.held_out_numbers [--engines ppocrv5,ppocrv6,tesseract,rapidocr]
        [--pages ID-SUBSTRING ...] [--looked-at-only | --fresh-only] [--rapidocr-python PATH]
        [--output PATH]

The pages are the fresh sets of benchmarks/corpora/numbers.toml (each chosen blind by a rule on
its text layer's numeric tokens and committed before any engine read it; a set's first run is
the measure of pages not tuned on, after which it is marked looked_at), then the structure
corpus's pages that the real-document corpus does not hold (looked at). Born-digital pages,
rendered as damaged scans; the truth is their own text layer inside the crop box.

Each page goes through `ocr_document` as the processor runs it (PP-OCRv5 mobile or PP-OCRv6
small; the decoder's look-alike digits on unless --no-lookalike-digits); Tesseract (--psm 3)
and RapidOCR 3.10 (its PP-OCRv6 small ONNX, in a venv of its own: real_documents.py's) read
the same PNG. Scored with real_documents.py's numeric-token recall and precision (pooled over
a group's pages, per kind), order-free word recall, and the numbers read with a space between
two digits that the truth lacks. The pipeline's page verdicts and the numbers each one flags
as doubtful are kept per page. Written to benchmarks/results/held_out_numbers.json; one run,
never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Final

from benchmarks.corpora import NumberSet, StructurePage, number_sets, real_pages, structure_pages
from benchmarks.corpora.fetch import REPO_ROOT, licence_of
from benchmarks.real_documents import (
    NUMERIC_KINDS,
    PageScore,
    _numeric,
    numeric_tokens,
    pooled_numeric,
    rapidocr_python,
    read_with_rapidocr,
    read_with_tesseract,
    score_page,
    split_report,
    tesseract_version,
)
from benchmarks.reporting import RunClock, provenance, write_results
from benchmarks.structure_corpus import prepare

RESULTS: Final = REPO_ROOT / "benchmarks" / "results" / "held_out_numbers.json"
# Each set's first run, before anyone looked at its pages: the history of the fresh sets.
FRESH_SETS: Final = REPO_ROOT / "benchmarks" / "results" / "fresh_sets.json"
FRESH_RUN: Final = REPO_ROOT / ".cache" / "held_out_numbers-fresh.json"
ENGINES: Final = ("ppocrv5", "ppocrv6", "tesseract", "rapidocr")
MODELS: Final = {"ppocrv5": "PP-OCRv5", "ppocrv6": "PP-OCRv6"}
# The kinds of document a set reported by kind holds, each a group of its own.
KINDS: Final = {
    "invoice": "invoices",
    "tax": "tax forms and tables",
    "report": "a report and a catalogue",
    "form": "a government form",
}
LOOKED_AT: Final = "looked at"
STRUCTURE_GROUPS: Final = ("structure held out", "structure tuning")


def groups() -> tuple[str, ...]:
    """Every group the report may hold: the sets newest first (each by kind where it is
    reported so), then the structure corpus's pages."""
    named = []
    for chosen in reversed(number_sets()):
        named.append(chosen.name)
        if chosen.by_kind:
            named += [f"{chosen.name}: {kind}" for kind in KINDS.values()]
    return (*named, LOOKED_AT, *STRUCTURE_GROUPS)


def fresh_sets() -> tuple[NumberSet, ...]:
    """The sets whose first run is still to come, or is the last run: never looked at."""
    return tuple(chosen for chosen in number_sets() if not chosen.looked_at)


class TextLineEngine:
    """This pipeline's text-line engine, warm, reading a page image as a job does."""

    def __init__(self, model: str, *, lookalike_digits: bool, detector_side: int | None) -> None:
        from idp.contract.jobs import JobOptions
        from idp.contract.names import OcrModel
        from idp.document.ocr.models.cache import ModelCache
        from idp.document.ocr.paddle.environment import prepare_paddle_environment
        from idp.document.ocr.registry import EngineRegistry
        from idp.document.ocr.settings import EngineSettings

        prepare_paddle_environment()
        models = Path(os.environ.get("IDP_MODELS_DIR", REPO_ROOT / ".models"))
        cache = ModelCache(search_roots=[models])
        settings = EngineSettings(lookalike_digits=lookalike_digits)
        if detector_side is not None:
            settings = replace(settings, det_limit_side_len=detector_side)
        registry = EngineRegistry(resolve=cache.fetch, settings=settings)
        self.options = JobOptions()
        self.reader = registry.get(OcrModel(model), "en", self.options)

    def read(self, image: Path) -> tuple[str, float, dict[str, Any]]:
        from idp.document.ocr.pipeline import ocr_document

        tick = time.perf_counter()
        outcome = ocr_document(image.read_bytes(), engine=self.reader, options=self.options)
        seconds = time.perf_counter() - tick
        (page,) = outcome.pages
        quality = page.quality
        facts = {"quality": None if quality is None else quality.model_dump(mode="json")}
        return page.text, seconds, facts


def start_engines(
    engines: list[str], prepared: list[Any], args: argparse.Namespace
) -> tuple[dict[str, TextLineEngine], dict[str, str | None], dict[str, Any]]:
    """This pipeline's warm readers, the peers' versions, and RapidOCR's reads of every page
    (at once, in a process of its own venv: real_documents.py's)."""
    readers: dict[str, TextLineEngine] = {}
    versions: dict[str, str | None] = {}
    for name in engines:
        if name in MODELS:
            readers[name] = TextLineEngine(
                MODELS[name],
                lookalike_digits=not args.no_lookalike_digits,
                detector_side=args.detector_side,
            )
        elif name == "tesseract":
            versions["tesseract"] = tesseract_version()
    rapid: dict[str, Any] = {}
    if "rapidocr" in engines:
        images = {p.page.id: p.image for p in prepared}
        rapid, info = read_with_rapidocr(rapidocr_python(args.rapidocr_python), images, 1)
        versions["rapidocr"] = str(info["versions"])
    return readers, versions, rapid


def record_first_run(
    chosen: NumberSet,
    summary: dict[str, dict[str, dict[str, Any]]],
    versions: dict[str, str | None],
    history: Path = FRESH_SETS,
) -> None:
    """The set's first run, per engine and kind of document, added to the sets' history. A set
    has one first run: a second is refused, since its pages were seen after the first."""
    record = json.loads(history.read_text(encoding="utf-8"))
    if any(entry["name"] == chosen.name for entry in record["sets"]):
        raise SystemExit(f"{chosen.name} has its first run in {history} already: mark it looked_at")
    by_kind = {
        group.split(": ", 1)[1]: engines
        for group, engines in summary.items()
        if group.startswith(f"{chosen.name}: ")
    }
    first_run = {"recorded": provenance(), "versions": versions, "engines": summary[chosen.name]}
    record["sets"].append(
        {
            "name": chosen.name,
            "date": str(chosen.date),
            "looked_at": chosen.looked_at,
            "pages": len(chosen.pages),
            "first_run": {**first_run, "by_kind": by_kind or None},
        }
    )
    history.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def numeric_pages() -> list[StructurePage]:
    """The fresh sets' pages, newest set first, then the structure corpus's pages that the
    real-document corpus does not hold."""
    tuned = {page.id for page in real_pages()}
    looked_at = [page for page in structure_pages() if page.id not in tuned]
    return [page for chosen in reversed(number_sets()) for page in chosen.pages] + looked_at


# What the page verdict strips from around a numeric word (idp.document.ocr.steps.quality).
_AROUND_NUMBERS: Final = "()[]{}\"'+%$€£¥;!?,.:"


def wrong_numbers(words: list[str], truth: str) -> int:
    """How many of the numeric words (as the page verdict lists them) the truth lacks."""

    def bare(word: str) -> str:
        return word.strip(_AROUND_NUMBERS).strip(",./:-")

    tokens = {bare(word) for word in truth.split()}
    return sum(bare(word) not in tokens for word in words)


def groups_of(page: StructurePage) -> list[str]:
    """The report's groups a page counts in: its set (and its kind of document, where the set
    is reported so), or the structure corpus's."""
    for chosen in number_sets():
        if page in chosen.pages:
            if chosen.by_kind:
                return [chosen.name, f"{chosen.name}: {KINDS[page.kinds[-1]]}"]
            return [chosen.name]
    return [LOOKED_AT, STRUCTURE_GROUPS[0] if page.held_out else STRUCTURE_GROUPS[1]]


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--pages", nargs="*", default=[], help="only pages whose id has one")
    parser.add_argument("--no-lookalike-digits", action="store_true")
    parser.add_argument(
        "--detector-side", type=int, help="the detector's input limit (EngineSettings's default)"
    )
    parser.add_argument(
        "--looked-at-only",
        action="store_true",
        help="leave out the pages never looked at (for a run that tunes a rule)",
    )
    parser.add_argument(
        "--fresh-only",
        action="store_true",
        help="read only the pages never looked at (their one measurement, every engine)",
    )
    parser.add_argument("--rapidocr-python", default=os.environ.get("RAPIDOCR_PYTHON"))
    parser.add_argument(
        "--output", type=Path, help=f"default: {RESULTS}, or {FRESH_RUN} with --fresh-only"
    )
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    clock = RunClock()
    engines = [name for name in args.engines.split(",") if name]
    fresh = [page for chosen in fresh_sets() for page in chosen.pages]
    pages = [
        page
        for page in numeric_pages()
        if (not args.pages or any(s in page.id for s in args.pages))
        and not (args.looked_at_only and page in fresh)
        and not (args.fresh_only and page not in fresh)
    ]
    print(f"preparing {len(pages)} pages", file=sys.stderr)
    prepared = [prepare(page) for page in pages]

    rows: list[dict[str, Any]] = []
    scores: dict[str, dict[str, list[PageScore]]] = {}
    readers, versions, rapid = start_engines(engines, prepared, args)
    for p in prepared:
        row: dict[str, Any] = {
            "id": p.page.id,
            "held_out": p.page.held_out,
            "kinds": list(p.page.kinds),
            "numeric_tokens": len(numeric_tokens(p.text)),
            **licence_of(p.page.source),
        }
        for name in engines:
            facts: dict[str, Any] = {}
            if name == "tesseract":
                if versions.get("tesseract") is None:
                    continue
                read = read_with_tesseract(p.image, 1)
                text, seconds = read.text, read.seconds
            elif name == "rapidocr":
                text, seconds = rapid[p.page.id].text, rapid[p.page.id].seconds
            else:
                text, seconds, facts = readers[name].read(p.image)
            score = score_page(p.text, text, strip_leaders=p.page.strip_leaders)
            row[name] = {"seconds": round(seconds, 3), "score": asdict(score), **facts}
            if name in MODELS:
                doubtful = (facts.get("quality") or {}).get("doubtful_numbers") or []
                row[name]["doubtful"] = doubtful
                row[name]["doubtful_wrong"] = wrong_numbers(doubtful, p.text)
            for group in groups_of(p.page):
                scores.setdefault(group, {}).setdefault(name, []).append(score)
            print(f"  {name} {p.page.id}: {seconds:.2f} s", file=sys.stderr, flush=True)
        rows.append(row)

    summary: dict[str, dict[str, dict[str, Any]]] = {
        group: {name: _summary(found) for name, found in scores[group].items()}
        for group in groups()
        if group in scores
    }
    table = markdown_table(summary)
    doubts = verdicts(rows, [name for name in engines if name in MODELS])
    splits = split_report(rows, engines)
    print(f"\n{len(prepared)} pages; {clock.summary()}\n\n{table}\n\n{doubts}\n\n{splits}")
    report = {
        "run": clock.run_info(lookalike_digits=not args.no_lookalike_digits),
        "versions": versions,
        "sets": [
            {"name": s.name, "date": str(s.date), "looked_at": s.looked_at, "pages": len(s.pages)}
            for s in number_sets()
        ],
        "summary": summary,
        "table_markdown": table,
        "verdicts_markdown": doubts,
        "split_numbers": splits,
        "pages": rows,
    }
    if args.output is None:
        args.output = FRESH_RUN if args.fresh_only else RESULTS
    write_results(report, args.output)
    print(f"written to {args.output}")
    if args.fresh_only and not args.pages:
        for chosen in fresh_sets():
            record_first_run(chosen, summary, versions)
            print(f"{chosen.name}: first run recorded in {FRESH_SETS}")


def _summary(found: list[PageScore]) -> dict[str, Any]:
    recall = sorted(score.word_recall for score in found)
    return {
        "pages": len(found),
        "word_recall_median": recall[len(recall) // 2],
        "numeric": pooled_numeric(found),
    }


def markdown_table(summary: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Per group and engine: numeric-token recall / precision (tokens) per kind."""
    head = "| group | engine | pages | word recall | " + " | ".join(NUMERIC_KINDS) + " |"
    lines = [head, "|---" * (4 + len(NUMERIC_KINDS)) + "|"]
    for group, engines in summary.items():
        for name, found in engines.items():
            cells = " | ".join(_numeric(found["numeric"].get(kind)) for kind in NUMERIC_KINDS)
            lines.append(
                f"| {group} | {name} | {found['pages']} | {found['word_recall_median']:.3f}"
                f" | {cells} |"
            )
    return "\n".join(lines)


def verdicts(rows: list[dict[str, Any]], engines: list[str]) -> str:
    """Per engine: pages put up for review as numbers_doubtful, how many numbers they flag, and
    how many of those were read wrong (not among the page's true numeric tokens)."""
    lines = []
    for name in engines:
        flagged = [row for row in rows if (row.get(name) or {}).get("doubtful")]
        numbers = sum(len(row[name]["doubtful"]) for row in flagged)
        wrong = sum(row[name]["doubtful_wrong"] for row in flagged)
        lines.append(
            f"{name}: {len(flagged)} of {len(rows)} pages flagged numbers_doubtful,"
            f" {numbers} numbers flagged, {wrong} of them read wrong"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
