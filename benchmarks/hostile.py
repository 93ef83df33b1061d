"""Hostile input through the document path, under the memory a function has: the regression
corpus (devkit.hostile.CORPUS) file by file with its peak RSS, and a fuzz session that draws
documents of hostile shape with hypothesis.

    .venv/bin/python -m benchmarks.hostile [--corpus] [--fuzz-examples N] [--seed S]
        [--fuzz-minutes M] [--model PP-OCRv5] [--memory-mb 4096] [--output FILE]

One process loads the engine once (as a warm worker does), then caps its own address space at
the function's memory (RLIMIT_AS) and reads each document as the processor does: decode → pages
→ every page step (orientation, detection, recognition, reading order, verdict, second read).
Each document must end as the processor would record it: COMPLETED, or FAILED with the code of
a user's error (idp.contract.errors). Anything else is a finding: MemoryError, ENGINE_ERROR, an
exception no code names, or a document that runs past --seconds-per-document. Peak RSS is read
per document (VmHWM, reset before each one through /proc/self/clear_refs).

The fuzz session is hypothesis with a fixed seed: `make test` runs the corpus and a short
session (tests/system/fuzz); a long one is `--fuzz-minutes 30`, which runs sessions of
--fuzz-examples each on seeds S, S+1, ... until the time is up. It prints a table and writes
JSON (default .cache/hostile.json), and exits 1 when anything was found.
"""

from __future__ import annotations

import argparse
import resource
import signal
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.reporting import REPO_ROOT, write_results

DEFAULT_OUTPUT = REPO_ROOT / ".cache" / "hostile.json"
# The processor's function memory: the address-space ceiling a worker runs under.
DEFAULT_MEMORY_MB = 4096
SECONDS_PER_DOCUMENT = 180.0


@dataclass
class Outcome:
    """How one document ended, and what it cost."""

    name: str
    size_bytes: int
    status: str  # COMPLETED, FAILED or FINDING
    code: str | None  # the job's error code where FAILED
    detail: str  # pages and verdicts, the error's message, or the finding's traceback
    seconds: float
    peak_rss_mb: float


class Timeout(Exception):
    """A document ran past its time: a hang."""


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: Any) -> None:
        raise Timeout(f"still running after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _reset_peak() -> None:
    """Start a new high-water mark of this process's RSS (Linux: clear_refs 5)."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def _peak_rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Worker:
    """A warm engine and the document path, as the processor runs them."""

    def __init__(self, model: str, models_dir: Path, seconds_per_document: float) -> None:
        from idp.contract.jobs import JobOptions
        from idp.contract.names import OcrModel
        from idp.document.ocr.models.cache import ModelCache
        from idp.document.ocr.registry import EngineRegistry
        from idp.document.ocr.settings import EngineSettings

        cache = ModelCache(
            s3=None, bucket=None, local_root=Path(tempfile.mkdtemp()), search_roots=[models_dir]
        )
        registry = EngineRegistry(resolve=cache.fetch, settings=EngineSettings(cpu_threads=2))
        self.options = JobOptions()
        self.reader = registry.get(OcrModel(model), "en", self.options)
        self.seconds_per_document = seconds_per_document

    def read(self, name: str, data: bytes) -> Outcome:
        from idp.contract.errors import EngineFailure, JobError
        from idp.document.ocr.pipeline import ocr_document

        _reset_peak()
        started = time.perf_counter()
        status, code = "FINDING", None
        try:
            with _time_limit(self.seconds_per_document):
                done = ocr_document(data, engine=self.reader, options=self.options)
            verdicts = [page.quality.verdict if page.quality else "-" for page in done.pages]
            status = "COMPLETED"
            detail = f"{len(done.pages)} pages: " + ", ".join(
                f"{verdict} {page.quality.reasons if page.quality else ''}"
                for verdict, page in list(zip(verdicts, done.pages, strict=True))[:3]
            )
        except EngineFailure as error:  # the engine broke on the input: no user's error
            detail = f"{error.code}: {error.message}"
        except JobError as error:
            status, code, detail = "FAILED", error.code, error.message
        except Exception as error:  # noqa: BLE001 - anything else is a finding (hangs too)
            frames = traceback.extract_tb(error.__traceback__)[-4:]
            where = " < ".join(f"{Path(f.filename).name}:{f.lineno}" for f in reversed(frames))
            detail = f"{type(error).__name__}: {error} at {where}"
        return Outcome(
            name=name,
            size_bytes=len(data),
            status=status,
            code=code,
            detail=detail[:400],
            seconds=round(time.perf_counter() - started, 2),
            peak_rss_mb=round(_peak_rss_mb(), 1),
        )


def run_corpus(worker: Worker) -> list[Outcome]:
    from devkit.hostile import CORPUS

    outcomes = []
    for name, make in CORPUS.items():
        outcome = worker.read(name, make())
        outcomes.append(outcome)
        print(
            f"  {name:34} {outcome.status:9} {outcome.code or '':24} "
            f"{outcome.peak_rss_mb:7.0f} MB {outcome.seconds:6.1f} s",
            flush=True,
        )
    return outcomes


def run_fuzz(worker: Worker, *, examples: int, seed: int) -> list[Outcome]:
    """One hypothesis session of `examples` documents drawn with `seed`; every document read
    is kept, findings first shrunk by hypothesis to the smallest that still fails."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as with_seed

    from devkit.fuzzing import documents

    outcomes: list[Outcome] = []

    @with_seed(seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )
    @given(documents())
    def read_one(document: tuple[str, Callable[[], bytes]]) -> None:
        name, make = document
        outcome = worker.read(name, make())
        outcomes.append(outcome)
        assert outcome.status != "FINDING", f"{name}: {outcome.detail}"

    try:
        read_one()
    except AssertionError as finding:
        print(f"  finding (seed {seed}): {finding}", flush=True)
    return outcomes


def _summary(outcomes: list[Outcome]) -> dict[str, Any]:
    peaks = [outcome.peak_rss_mb for outcome in outcomes] or [0.0]
    return {
        "documents": len(outcomes),
        "completed": sum(outcome.status == "COMPLETED" for outcome in outcomes),
        "failed": sum(outcome.status == "FAILED" for outcome in outcomes),
        "findings": [asdict(outcome) for outcome in outcomes if outcome.status == "FINDING"],
        "peak_rss_mb_max": max(peaks),
        "peak_rss_mb_median": statistics.median(peaks),
        "seconds_max": max((outcome.seconds for outcome in outcomes), default=0.0),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="store_true", help="read the regression corpus")
    parser.add_argument("--fuzz-examples", type=int, default=0, help="documents per session")
    parser.add_argument("--fuzz-minutes", type=float, default=0.0, help="sessions until then")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="PP-OCRv5")
    parser.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB)
    parser.add_argument("--seconds-per-document", type=float, default=SECONDS_PER_DOCUMENT)
    parser.add_argument("--models-dir", type=Path, default=REPO_ROOT / ".models")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args()

    started = time.perf_counter()
    worker = Worker(args.model, args.models_dir, args.seconds_per_document)
    warm_mb = _peak_rss_mb()
    # From here on the process may hold no more than the function's memory.
    ceiling = args.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (ceiling, ceiling))
    print(f"warm worker {warm_mb:.0f} MB; address space capped at {args.memory_mb} MB")
    report: dict[str, Any] = {
        "model": args.model,
        "memory_mb": args.memory_mb,
        "warm_rss_mb": round(warm_mb, 1),
        "python": sys.version.split()[0],
    }
    if args.corpus:
        print("corpus:")
        corpus = run_corpus(worker)
        report["corpus"] = [asdict(outcome) for outcome in corpus]
        report["corpus_summary"] = _summary(corpus)
    fuzzed: list[Outcome] = []
    sessions = []
    if args.fuzz_examples:
        seed = args.seed
        while True:
            print(f"fuzz session: {args.fuzz_examples} documents, seed {seed}", flush=True)
            fuzzed += run_fuzz(worker, examples=args.fuzz_examples, seed=seed)
            sessions.append(seed)
            elapsed = (time.perf_counter() - started) / 60
            if elapsed >= args.fuzz_minutes:
                break
            seed += 1
        report["fuzz"] = {"seeds": sessions, **_summary(fuzzed)}
        report["fuzz"]["minutes"] = round((time.perf_counter() - started) / 60, 1)
    findings = report.get("corpus_summary", {}).get("findings", []) + report.get("fuzz", {}).get(
        "findings", []
    )
    report["findings"] = len(findings)
    for part in ("corpus_summary", "fuzz"):
        if part in report:
            summary = report[part]
            print(
                f"{part}: {summary['documents']} documents, {summary['completed']} completed, "
                f"{summary['failed']} failed with a code, {len(summary['findings'])} findings; "
                f"peak RSS max {summary['peak_rss_mb_max']:.0f} MB, "
                f"median {summary['peak_rss_mb_median']:.0f} MB"
            )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    write_results(report, args.output)
    print(f"wrote {args.output}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
