"""One warm OCR processor, many jobs: its memory after every job, over 500 pages of mixed sizes.

Starts the local pipeline (embedded AWS on loopback, the real handlers, real OCR on the offline
weights) with one processor execution environment, then submits the documents one at a time
through the pipeline client (the file uploaded to the input bucket, its job message on the
queue; the invoker admits it into the jobs table and invokes the processor as Lambda does) and
waits until each job is terminal. The processor's environment is one process throughout: a
spawned worker that imports the real handler with the function's environment and calls it with
each event and a Lambda context, as devkit.local.functions does, and that reads its own memory
(/proc/self/status VmRSS and VmHWM, glibc's mallinfo2) when each invocation returns.

The pages, drawn with a fixed seed (--mix, shares of the pages): generated letter pages
(1700×2200 PNG), 300-dpi letter scans (2550×3300 PNG, JPEG or TIFF), born-digital PDFs (A4, read
from their text layer) and scanned PDFs (A4 image pages at 144 dpi) of --pdf-pages pages each,
and --hires 2400-dpi pages from page --hires-at on, as large as the processor's page budget
takes (idp.document.budgets; --hires-inches asks for a size). Every page's text differs, so no
job is answered from the result cache.

Reports RSS after the first job and after 50, 100, 200, ... pages, the growth after the first 50
pages ((RSS at the end − RSS after 50 pages) / RSS after 50 pages; held to ≤ 10 %) and the whole
curve. Prints a table; writes benchmarks/results/warm_worker.json.

    .venv/bin/python -m benchmarks.warm_worker [--pages 500] [--model PP-OCRv5]
        [--mix letter=3,scan300=2,born-digital=3,scanned-pdf=2] [--hires 1] [--seed 7]

To find what grows, on the worker: --malloc-trim calls glibc's malloc_trim(0) after every job
(RSS is read before and after it), --worker-env KEY=VALUE starts the worker with that in its
environment (MALLOC_ARENA_MAX=2), --tracemalloc traces Python's allocations from the second job
on and keeps the lines that grew most, --no-ort-arena runs the text-line engines' ONNX Runtime
sessions without their CPU memory arena.
"""

from __future__ import annotations

import argparse
import ctypes
import math
import os
import platform
import random
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

# Only the standard library above, and devkit.local.functions (itself only the standard library,
# as every local execution environment imports it): the worker is spawned and imports this
# module too, and it should hold what a processor environment holds.
from benchmarks.reporting import add_pipeline_arguments, print_rows, run_and_report
from devkit.local.functions import WorkerEnvironment

if TYPE_CHECKING:
    from devkit.client import PipelineClient
    from devkit.local.pipeline import LocalPipeline

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "benchmarks" / "results" / "warm_worker.json"
MODELS = ("PP-OCRv5", "PP-OCRv6")

Kind = Literal["letter", "scan300", "born-digital", "scanned-pdf", "hires"]
DEFAULT_MIX: Final = "letter=3,scan300=2,born-digital=3,scanned-pdf=2"
PDF_KINDS: Final = ("born-digital", "scanned-pdf")
LETTER_IN: Final = (8.5, 11.0)
LINES_PER_PAGE: Final = 30
HIRES_DPI: Final = 2400
# The 2400-dpi page keeps this share of the page budget free: a page just under it is as large
# as one that reads, without sitting on the limit.
HIRES_BUDGET_SHARE: Final = 0.95
SCAN_FORMATS: Final[tuple[tuple[str, dict[str, Any]], ...]] = (
    ("PNG", {}),
    ("JPEG", {"quality": 90}),
    ("TIFF", {"compression": "tiff_lzw"}),
)
CHECKPOINTS: Final = (50, 100)  # pages; then every 100 pages to the end
HELD_TO: Final = 0.10  # growth after the first 50 pages
JOB_TIMEOUT_S: Final = 1200.0

_MIB: Final = 1024 * 1024


# -- the worker: the processor's execution environment, reading its own memory ------------------
@dataclass(frozen=True)
class Probe:
    """What the worker measures, and the experiments it runs on itself."""

    memory_mb: int
    malloc_trim: bool = False
    tracemalloc: bool = False
    ort_arena: bool = True
    start_env: dict[str, str] = field(default_factory=dict)  # set before the worker starts


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",  # bytes the heaps took from the system with brk/sbrk (every arena)
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",  # bytes in chunks mmapped on their own
            "usmblks",
            "fsmblks",
            "uordblks",  # bytes in use in the heaps
            "fordblks",  # bytes free in the heaps, kept by the allocator
            "keepcost",
        )
    ]


def _status_mb() -> dict[str, float]:
    """This process's resident memory now and its high-water mark, from /proc/self/status."""
    fields = {"VmRSS": "rss_mb", "VmHWM": "peak_mb", "RssAnon": "anon_mb", "RssFile": "file_mb"}
    read: dict[str, float] = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in fields:
                read[fields[name]] = round(int(value.split()[0]) / 1024, 1)
            elif name == "Threads":
                read["threads"] = int(value)
    return read


def _heap_mb(libc: ctypes.CDLL) -> dict[str, float]:
    libc.mallinfo2.restype = _MallInfo2  # glibc ≥ 2.33: every arena's heap, summed
    info = libc.mallinfo2()
    return {
        "heap_in_use_mb": round((info.uordblks + info.hblkhd) / _MIB, 1),
        "heap_free_kept_mb": round(info.fordblks / _MIB, 1),
        "heap_mmapped_mb": round(info.hblkhd / _MIB, 1),
    }


def _reset_peak() -> None:
    """A new high-water mark of this process's RSS from now (Linux: clear_refs 5)."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def _without_ort_arena() -> None:
    """An experiment: the text-line engines' ONNX Runtime sessions without their CPU memory
    arena (which keeps its high-water mark and grows in power-of-two regions), patched into this
    worker before the handler builds its engines."""
    from idp.document.ocr.settings import EngineSettings, InferenceBackend

    runtime_kwargs = EngineSettings.runtime_kwargs

    def without_arena(self: EngineSettings, runtime: InferenceBackend) -> dict[str, Any]:
        kwargs = runtime_kwargs(self, runtime)
        if runtime == "onnxruntime":
            kwargs["engine_config"] = {**kwargs["engine_config"], "enable_cpu_mem_arena": False}
        return kwargs

    EngineSettings.runtime_kwargs = without_arena  # type: ignore[method-assign]


def serve(conn: Connection, handler_path: str, env: dict[str, str], probe: Probe) -> None:
    """The worker's body: import the handler once, then answer invocations until closed; each
    reply carries what the process holds once the handler has returned."""
    from devkit.local.functions import LambdaContext, call_handler, load_handler

    handler, function_name = load_handler(handler_path, env)
    if not probe.ort_arena:
        _without_ort_arena()
    libc = ctypes.CDLL("libc.so.6")
    invocations = 0
    while True:
        try:
            event, deadline, request_id = conn.recv()
        except EOFError:
            return
        invocations += 1
        if probe.tracemalloc and invocations == 2:  # from the warm engine on
            import tracemalloc

            tracemalloc.start(8)
            baseline = tracemalloc.take_snapshot()
        _reset_peak()
        context = LambdaContext(function_name, probe.memory_mb, deadline, request_id)
        started = time.perf_counter()
        reply = call_handler(handler, event, context)
        memory: dict[str, Any] = {"seconds": round(time.perf_counter() - started, 2)}
        memory |= _status_mb() | _heap_mb(libc)
        if probe.malloc_trim:
            libc.malloc_trim(0)
            after = _status_mb()
            memory |= {"rss_before_trim_mb": memory["rss_mb"], "rss_mb": after["rss_mb"]}
            memory |= {"anon_mb": after["anon_mb"]} | _heap_mb(libc)
        if probe.tracemalloc and invocations >= 2:
            memory["traced_mb"] = round(tracemalloc.get_traced_memory()[0] / _MIB, 2)
            if invocations % 25 == 0:
                grown = tracemalloc.take_snapshot().compare_to(baseline, "lineno")[:8]
                memory["traced_growth"] = [str(stat) for stat in grown]
        conn.send((reply, memory))


@dataclass
class Sample:
    """One invocation, as the worker reported it."""

    job_id: str | None
    outcome: str
    memory: dict[str, Any]


class MeasuredEnvironment(WorkerEnvironment):
    """The processor's execution environment: devkit.local.functions' worker environment running
    `serve`, whose memory after each invocation is appended to `samples`."""

    def __init__(
        self, handler: str, env: dict[str, str], probe: Probe, samples: list[Sample]
    ) -> None:
        self.samples = samples
        # The C library reads its malloc settings when the process starts.
        saved = {key: os.environ.get(key) for key in probe.start_env}
        os.environ.update(probe.start_env)
        try:
            env = {**env, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(probe.memory_mb)}
            super().__init__(
                handler, env, probe.memory_mb, target=serve, args=(handler, env, probe)
            )
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    def _reply(self, event: Any, message: Any) -> tuple[Any, ...]:
        job_id = event.get("job_id")
        if message is None:
            self.samples.append(Sample(job_id, "crash", {}))
            return ()
        reply, memory = message
        self.samples.append(Sample(job_id, reply[0], memory))
        return tuple(reply)


def measure_processor(pipeline: LocalPipeline, probe: Probe) -> list[Sample]:
    """Deploy the processor again with one MeasuredEnvironment at most (before its first job);
    the samples its invocations report."""
    from devkit.local.functions import LocalFunction
    from idp.contract.topology import Function

    assert pipeline.runtime is not None
    functions = pipeline.runtime.lambda_service.functions
    deployed = functions[Function.PROCESSOR]
    samples: list[Sample] = []
    functions[Function.PROCESSOR] = LocalFunction(
        name=deployed.name,
        handler=deployed.handler,
        env=deployed.env,
        memory_mb=deployed.memory_mb,
        timeout_s=deployed.timeout_s,
        concurrency=1,
        environment_factory=lambda env: MeasuredEnvironment(deployed.handler, env, probe, samples),
    )
    deployed.shutdown()
    return samples


# -- the documents ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Planned:
    """One job of the run: its place, its kind and its pages."""

    index: int
    kind: Kind
    pages: int


def parse_mix(text: str) -> dict[Kind, float]:
    mix: dict[Kind, float] = {}
    for part in text.split(","):
        name, _, weight = part.partition("=")
        if name not in ("letter", "scan300", "born-digital", "scanned-pdf"):
            raise argparse.ArgumentTypeError(f"unknown page kind {name!r} in --mix")
        mix[name] = float(weight or 1)  # type: ignore[index]
    return mix


def plan(
    pages: int,
    mix: dict[Kind, float],
    *,
    pdf_pages: tuple[int, int],
    hires: int,
    hires_at: int,
    seed: int,
) -> list[Planned]:
    """Jobs until `pages` pages, kinds drawn so that each kind's share of the pages follows its
    weight in `mix` (a PDF counts its pages); the 2400-dpi pages once `hires_at` pages are in."""
    rng = random.Random(seed)  # a repeatable run
    mean_pages = {kind: sum(pdf_pages) / 2 if kind in PDF_KINDS else 1.0 for kind in mix}
    kinds = list(mix)
    weights = [mix[kind] / mean_pages[kind] for kind in kinds]
    jobs: list[Planned] = []
    done = 0
    while done < pages:
        if hires and done >= hires_at:
            kind: Kind = "hires"
            hires -= 1
        else:
            kind = rng.choices(kinds, weights)[0]
        count = rng.randint(*pdf_pages) if kind in PDF_KINDS else 1
        jobs.append(Planned(len(jobs), kind, count))
        done += count
    return jobs


def page_lines(job: int, page: int, count: int = LINES_PER_PAGE) -> list[str]:
    """Known lines headed by the job and page, so that no two pages of a run read the same."""
    from devkit.synthetic import sample_lines

    return [f"Document {job} page {page}", *sample_lines(count - 1, offset=job * 7 + page)]


def hires_size(inches: tuple[float, float] | None) -> tuple[int, int]:
    """A 2400-dpi page of `inches`, or the largest letter-shaped one within the page budget."""
    from idp.contract.topology import PROCESSOR_MEMORY_MB
    from idp.document.budgets import budgets_for

    if inches is not None:
        return round(inches[0] * HIRES_DPI), round(inches[1] * HIRES_DPI)
    pixels = budgets_for(PROCESSOR_MEMORY_MB).page_pixels * HIRES_BUDGET_SHARE
    aspect = LETTER_IN[0] / LETTER_IN[1]
    height = math.isqrt(int(pixels / aspect))
    return int(height * aspect), height


def make(job: Planned, hires_inches: tuple[float, float] | None) -> tuple[str, bytes]:
    """The job's file: its suffix and bytes."""
    from devkit.synthetic import encode, render_page, sample_lines
    from devkit.synthetic_pdf import PageSpec, born_digital_pdf

    lines = page_lines(job.index, 1)
    if job.kind == "letter":  # letter at 200 dpi, as processor.py measures a page
        return ".png", encode(render_page(lines, font_size=34), "PNG", dpi=(200, 200))
    if job.kind == "scan300":
        image = render_page(lines, size=(2550, 3300), font_size=46, margin=300)
        fmt, params = SCAN_FORMATS[job.index % len(SCAN_FORMATS)]
        return f".{fmt.lower()}", encode(image, fmt, dpi=(300, 300), **params)
    if job.kind in PDF_KINDS:
        kind: Literal["vector", "scanned"] = "vector" if job.kind == "born-digital" else "scanned"
        specs = [
            PageSpec(lines=tuple(page_lines(job.index, page)), kind=kind)
            for page in range(1, job.pages + 1)
        ]
        return ".pdf", born_digital_pdf(specs)
    width, height = hires_size(hires_inches)
    font = HIRES_DPI // 10  # 7 pt at 2400 dpi
    wrapped = textwrap.wrap(" ".join(sample_lines(40, offset=job.index)), width=42)
    rows = max(1, int((height - 2 * font) / (font * 1.9)))
    hires = [f"Document {job.index} page 1 at {HIRES_DPI} dpi", *wrapped[: rows - 1]]
    image = render_page(hires, size=(width, height), font_size=font, margin=font)
    return ".png", encode(image, "PNG", dpi=(HIRES_DPI, HIRES_DPI))


# -- the run ----------------------------------------------------------------------------------
def run_job(
    client: PipelineClient,
    job: Planned,
    samples: list[Sample],
    *,
    model: str,
    work: Path,
    hires_inches: tuple[float, float] | None,
) -> dict[str, Any]:
    """Submit one job, wait until it is terminal and its invocation has reported; its row."""
    from idp.contract.names import JobStatus, OcrModel

    suffix, data = make(job, hires_inches)
    path = work / f"job-{job.index:04d}-{job.kind}{suffix}"
    path.write_bytes(data)
    reported = len(samples)
    started = time.monotonic()
    submitted = client.submit(path, model=OcrModel(model), lang="en")
    path.unlink()
    deadline = started + JOB_TIMEOUT_S
    while True:
        record = client.job(submitted.job_id)
        status = JobStatus(record["status"]) if record else None
        mine = [s for s in samples[reported:] if s.job_id == submitted.job_id]
        if status is not None and status.is_terminal and mine:
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"job {job.index} ({job.kind}) not done after {JOB_TIMEOUT_S:.0f} s")
        time.sleep(0.1)
    assert record is not None
    row: dict[str, Any] = {
        "job": job.index + 1,
        "kind": job.kind,
        "pages_in_job": job.pages,
        "input_bytes": len(data),
        "status": record["status"],
        "error_code": record["error"]["code"] if "error" in record else None,
        "invocations": len(mine),
        "job_s": round(time.monotonic() - started, 2),
        **mine[-1].memory,
    }
    if status is JobStatus.COMPLETED:
        result = client.result_document(submitted.job_id)
        sources = [page.get("text_source", "ocr") for page in result.get("pages", [])]
        row["text_sources"] = {source: sources.count(source) for source in set(sources)}
        row["lines_read"] = sum(len(page.get("lines", [])) for page in result.get("pages", []))
        if job.index == 0:  # the models that read the run
            row["engine_models"] = result.get("engine", {}).get("models")
    return row


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="idp-warm-worker-") as work:
        return run_in(args, Path(work))


def run_in(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from devkit.local.pipeline import LocalPipeline
    from devkit.local.settings import LocalSettings
    from idp.contract.topology import PROCESSOR_MEMORY_MB

    jobs = plan(
        args.pages,
        args.mix,
        pdf_pages=args.pdf_pages,
        hires=args.hires,
        hires_at=args.hires_at if args.hires_at is not None else args.pages // 2,
        seed=args.seed,
    )
    probe = Probe(
        memory_mb=PROCESSOR_MEMORY_MB,
        malloc_trim=args.malloc_trim,
        tracemalloc=args.tracemalloc,
        ort_arena=not args.no_ort_arena,
        start_env=dict(args.worker_env),
    )
    settings = LocalSettings(
        work_dir=work / "pipeline",
        models_dir=Path(args.models_dir),
        vl_enabled=False,
        processor_concurrency=1,
        processor_threads=args.threads,
        quiet_functions=True,
    )
    load_at_start = round(os.getloadavg()[0], 2)
    rows: list[dict[str, Any]] = []
    with LocalPipeline(settings) as pipeline:
        samples = measure_processor(pipeline, probe)
        client = pipeline.client()
        started = time.monotonic()
        pages = 0
        for job in jobs:
            row = run_job(
                client, job, samples, model=args.model, work=work, hires_inches=args.hires_inches
            )
            pages += job.pages
            row["pages"] = pages
            rows.append(row)
            print(
                f"  job {row['job']:4d}  {pages:4d} pages  {job.kind:12} {row['status']:9} "
                f"RSS {row.get('rss_mb', 0):7.1f} MB  peak {row.get('peak_mb', 0):7.1f} MB  "
                f"{row['job_s']:6.1f} s",
                flush=True,
            )
        wall_s = time.monotonic() - started
    return summarize(args, rows, wall_s, load_at_start)


def rss_at(rows: list[dict[str, Any]], pages: int) -> dict[str, Any]:
    """The first job after which at least `pages` pages were done."""
    return next(row for row in rows if row["pages"] >= pages)


def _heap_of(row: dict[str, Any]) -> dict[str, Any]:
    """What glibc's heaps held after a job: in use (of it, chunks mmapped on their own) and
    free but kept."""
    fields = ("anon_mb", "heap_in_use_mb", "heap_mmapped_mb", "heap_free_kept_mb")
    return {"job": row["job"]} | {name: row.get(name) for name in fields}


def summarize(
    args: argparse.Namespace, rows: list[dict[str, Any]], wall_s: float, load: float
) -> dict[str, Any]:
    total = rows[-1]["pages"]
    marks = [m for m in CHECKPOINTS if m <= total] + list(range(200, total + 1, 100))
    marks += [] if total in marks else [total]
    checkpoints = [{"pages": rows[0]["pages"], "job": 1, "rss_mb": rows[0]["rss_mb"]}]
    for mark in marks:
        row = rss_at(rows, mark)
        checkpoints.append({"pages": row["pages"], "job": row["job"], "rss_mb": row["rss_mb"]})
    base = min(CHECKPOINTS[0], total)  # a short run: its last job
    at_50, at_end = rss_at(rows, base)["rss_mb"], rows[-1]["rss_mb"]
    # RSS swings with the last job's kind (what the allocator keeps of it): the highest after
    # 50 pages bounds what the end happened to show.
    highest = max(row["rss_mb"] for row in rows if row["pages"] >= base)
    kinds: dict[str, dict[str, int]] = {}
    for row in rows:
        tally = kinds.setdefault(row["kind"], {"jobs": 0, "pages": 0})
        tally["jobs"] += 1
        tally["pages"] += row["pages_in_job"]
    statuses: dict[str, int] = {}
    for row in rows:
        key = row["status"] + (f" {row['error_code']}" if row["error_code"] else "")
        statuses[key] = statuses.get(key, 0) + 1
    return {
        "model": args.model,
        "pages": total,
        "jobs": len(rows),
        "mix": {"weights": args.mix, "by_kind": kinds, "pdf_pages": list(args.pdf_pages)},
        "hires": {
            "dpi": HIRES_DPI,
            "size_px": list(hires_size(args.hires_inches)),
            "jobs": [row["job"] for row in rows if row["kind"] == "hires"],
        },
        "statuses": statuses,
        "experiments": {
            "malloc_trim": args.malloc_trim,
            "tracemalloc": args.tracemalloc,
            "ort_arena": not args.no_ort_arena,
            "worker_env": dict(args.worker_env),
        },
        "checkpoints": checkpoints,
        "growth_after_50_pages": {
            "base_pages": base,
            "rss_at_50_mb": at_50,
            "rss_at_end_mb": at_end,
            "mb": round(at_end - at_50, 1),
            "fraction": round((at_end - at_50) / at_50, 4),
            "highest_after_50_mb": highest,
            "highest_fraction": round((highest - at_50) / at_50, 4),
            "heap_at_50": _heap_of(rss_at(rows, base)),
            "heap_at_end": _heap_of(rows[-1]),
            "held_to": HELD_TO,
        },
        "peak_rss_mb": max(row.get("peak_mb", 0.0) for row in rows),
        "wall_s": round(wall_s, 1),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "libc": "-".join(platform.libc_ver()),
            "load_average_1m_start": load,
            "load_average_1m_end": round(os.getloadavg()[0], 2),
        },
        "threads": args.threads,
        "seed": args.seed,
        "curve": rows,
    }


def print_table(report: dict[str, Any]) -> None:
    at_50 = report["growth_after_50_pages"]["rss_at_50_mb"]
    print(f"\n{report['model']}: {report['pages']} pages in {report['jobs']} jobs, one worker")
    print(f"{'pages done':>10}  {'job':>5}  {'RSS MB':>8}  {'vs 50 pages':>11}")
    for point in report["checkpoints"]:
        change = (point["rss_mb"] - at_50) / at_50
        print(f"{point['pages']:>10}  {point['job']:>5}  {point['rss_mb']:>8.1f}  {change:>+10.1%}")
    growth = report["growth_after_50_pages"]
    verdict = "within" if growth["fraction"] <= HELD_TO else "beyond"
    print_rows(
        [
            (
                "growth after the first 50 pages",
                f"{growth['mb']:+.1f} MB ({growth['fraction']:+.1%}; {verdict} {HELD_TO:.0%})",
            ),
            (
                "highest RSS after 50 pages",
                f"{growth['highest_after_50_mb']:.1f} MB ({growth['highest_fraction']:+.1%})",
            ),
            ("peak RSS (highest job)", f"{report['peak_rss_mb']:.0f} MB"),
            ("statuses", ", ".join(f"{k}: {v}" for k, v in report["statuses"].items())),
            ("wall time", f"{report['wall_s']:.0f} s"),
        ]
    )


def _pair(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    return int(low), int(high or low)


def _inches(text: str) -> tuple[float, float]:
    width, _, height = text.partition("x")
    return float(width), float(height)


def _env(text: str) -> tuple[str, str]:
    key, _, value = text.partition("=")
    return key, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=500, help="pages to run (at least)")
    parser.add_argument("--model", choices=MODELS, default="PP-OCRv5")
    parser.add_argument("--mix", type=parse_mix, default=parse_mix(DEFAULT_MIX))
    parser.add_argument("--pdf-pages", type=_pair, default=(3, 8), help="pages of a PDF: 3-8")
    parser.add_argument("--hires", type=int, default=1, help="2400-dpi pages")
    parser.add_argument("--hires-at", type=int, default=None, help="default: half the pages")
    parser.add_argument("--hires-inches", type=_inches, default=None, help="e.g. 8.5x11")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--malloc-trim", action="store_true")
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument("--no-ort-arena", action="store_true", help="ONNX Runtime's CPU arena off")
    parser.add_argument("--worker-env", type=_env, action="append", default=[])
    add_pipeline_arguments(parser, results=RESULTS)
    args = parser.parse_args()
    run_and_report(args, "idp-warm-worker-", run, print_table)


if __name__ == "__main__":
    main()
