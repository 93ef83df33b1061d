"""Load test of the local pipeline: N small documents submitted at once, every job must end once.

Starts a LocalPipeline (embedded AWS on loopback, real handlers, real PP-OCRv5 on the offline
weights), submits N one-line PNG pages of distinct text through the pipeline client, waits (with
a bound) until every job is terminal, stops everything, and reports: terminal statuses, lost jobs
(submitted but not terminal at the end), duplicate OCR runs (more than one processor invoke or
attempt for a job), DLQ depth, throughput, p50/p95 end-to-end latency (the record's created_at →
finished_at), peak memory of the whole process tree, and the CER of a sample of results.
Prints a table; writes benchmarks/results/load.json. A benchmark, not a test: it asserts nothing,
it exits non-zero only when a job was lost or ran twice.

    .venv/bin/python -m benchmarks.load [--count 500] [--processor-concurrency 2]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.corpora import CORPORA
from benchmarks.measure import seconds_between, spread
from benchmarks.reporting import add_pipeline_arguments, print_rows, run_and_report
from devkit.client import PipelineClient
from devkit.local.pipeline import LocalPipeline
from devkit.local.settings import LocalSettings
from devkit.synthetic import encode, render_page
from devkit.textmetrics import character_error_rate
from idp.contract import names
from idp.contract.job_record import JobRecord
from idp.contract.names import JobStatus, OcrModel
from idp.contract.timestamps import parse_timestamp

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "benchmarks" / "results" / "load.json"
PAGE_SIZE = (600, 80)
FONT_SIZE = 26
# Short phrases so that each page holds one line; the job number makes every text distinct.
PHRASES = tuple((CORPORA / "load_phrases.txt").read_text(encoding="utf-8").splitlines())


def page_text(index: int) -> str:
    return f"Doc {index:04d}: {PHRASES[index % len(PHRASES)]}"


# -- memory of the whole process tree (this process, the emulator, every function worker) -------
def _children_by_parent() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name (field 2) may contain spaces: the parent pid follows its ')'.
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_mib(root: int) -> float:
    """Sum of the resident set sizes of `root` and all its descendants (shared pages counted
    once per process, so an upper bound of what the tree really holds)."""
    tree = _children_by_parent()
    pending, total = [root], 0
    while pending:
        pid = pending.pop()
        total += _rss_kib(pid)
        pending.extend(tree.get(pid, []))
    return total / 1024


class MemorySampler:
    """Samples the process tree's RSS in the background; keeps the peak."""

    def __init__(self, interval_s: float = 0.5) -> None:
        self.peak_mib = 0.0
        self.samples = 0
        self._interval = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_mib = max(self.peak_mib, tree_rss_mib(os.getpid()))
            self.samples += 1
            self._stop.wait(self._interval)

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


# -- the run ---------------------------------------------------------------------------------
def make_pages(count: int, folder: Path) -> dict[Path, str]:
    folder.mkdir(parents=True, exist_ok=True)
    pages: dict[Path, str] = {}
    for index in range(count):
        text = page_text(index)
        path = folder / f"doc-{index:04d}.png"
        image = render_page([text], size=PAGE_SIZE, font_size=FONT_SIZE, margin=20)
        path.write_bytes(encode(image, "PNG"))
        pages[path] = text
    return pages


def wait_all(
    client: PipelineClient, job_ids: set[str], *, timeout_s: float, poll_s: float
) -> dict[str, JobRecord]:
    """One table scan per poll (not one read per job) until every job is terminal or timeout."""
    deadline = time.monotonic() + timeout_s
    records: dict[str, JobRecord] = {}
    last_report = 0.0
    while True:
        records = {
            job[names.JOB_ID_ATTR]: job
            for job in client.jobs()
            if job[names.JOB_ID_ATTR] in job_ids
        }
        done = sum(1 for r in records.values() if JobStatus(r["status"]).is_terminal)
        if time.monotonic() - last_report > 15:
            print(f"  {done}/{len(job_ids)} terminal", flush=True)
            last_report = time.monotonic()
        if done == len(job_ids) or time.monotonic() > deadline:
            return records
        time.sleep(poll_s)


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="idp-load-") as work:
        return run_in(args, Path(work))


def run_in(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    load_at_start = round(os.getloadavg()[0], 2)
    pages = make_pages(args.count, work / "pages")
    settings = LocalSettings(
        work_dir=work / "pipeline",
        models_dir=Path(args.models_dir),
        vl_enabled=False,
        invoker_batch_size=args.invoker_batch_size,
        processor_concurrency=args.processor_concurrency,
    )
    with MemorySampler() as memory, LocalPipeline(settings) as pipeline:
        assert pipeline.resources is not None
        assert pipeline.runtime is not None
        client = pipeline.client()
        texts: dict[str, str] = {}
        submitted_at: dict[str, datetime] = {}
        started = time.monotonic()

        def submit(path: Path) -> None:
            at = datetime.now(UTC)
            submitted = client.submit(path, model=OcrModel.PP_OCRV5)
            texts[submitted.job_id] = pages[path]
            submitted_at[submitted.job_id] = at

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(submit, pages))
        submitted_s = time.monotonic() - started
        print(f"  submitted {len(texts)} jobs in {submitted_s:.1f} s", flush=True)
        records = wait_all(client, set(texts), timeout_s=args.timeout, poll_s=2.0)
        wall_s = time.monotonic() - started
        stats = pipeline.runtime.stats
        processor_runs = {job_id: stats.processor_events[job_id] for job_id in texts}
        dlq = pipeline.endpoint.client("sqs").get_queue_attributes(
            QueueUrl=pipeline.resources.dlq_url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        dlq_count = sum(int(value) for value in dlq.values())
        rng = random.Random(7)
        completed = sorted(j for j, r in records.items() if r["status"] == JobStatus.COMPLETED)
        sample = rng.sample(completed, min(args.cer_sample, len(completed)))
        cers = []
        for job_id in sample:
            result = client.result_document(job_id)
            recognized = " ".join(
                line["text"] for page in result["pages"] for line in page["lines"]
            )
            cers.append(character_error_rate(texts[job_id], recognized))
        invocations = dict(stats.invocations)

    statuses = Counter(str(r["status"]) for r in records.values())
    terminal = {j: r for j, r in records.items() if JobStatus(r["status"]).is_terminal}
    lost = sorted(set(texts) - set(terminal))
    duplicates = sorted(
        j
        for j in texts
        if processor_runs[j] > 1 or (j in records and records[j].get("attempts", 0) > 1)
    )
    latencies = [seconds_between(r, "created_at", "finished_at") for r in terminal.values()]
    from_submit = [
        (parse_timestamp(r["finished_at"]) - submitted_at[j]).total_seconds()
        for j, r in terminal.items()
    ]
    completed_records = [r for r in terminal.values() if r["status"] == JobStatus.COMPLETED]
    stages = {
        "queued_in_sqs": [
            (parse_timestamp(r["created_at"]) - submitted_at[j]).total_seconds()
            for j, r in terminal.items()
        ],
        "admission": [
            seconds_between(r, "created_at", "dispatch_confirmed_at") for r in completed_records
        ],
        "waiting_for_processor": [
            seconds_between(r, "dispatch_confirmed_at", "started_at") for r in completed_records
        ],
        "processing": [seconds_between(r, "started_at", "finished_at") for r in completed_records],
    }
    ocr_ms = [
        float(r["timings_ms"]["ocr"])
        for r in terminal.values()
        if isinstance(r.get("timings_ms"), dict) and "ocr" in r["timings_ms"]
    ]
    return {
        "count": args.count,
        "page": {"size": list(PAGE_SIZE), "lines": 1, "format": "PNG", "model": "PP-OCRv5"},
        "settings": {
            "processor_concurrency": args.processor_concurrency,
            "invoker_batch_size": args.invoker_batch_size,
            "timeout_s": args.timeout,
        },
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "statuses": dict(sorted(statuses.items())),
        "lost_jobs": len(lost),
        "lost_job_ids": lost[:20],
        "duplicate_ocr_runs": len(duplicates),
        "duplicate_job_ids": duplicates[:20],
        "dlq_messages": dlq_count,
        "processor_invocations": invocations.get("OcrProcessor", 0),
        "invoker_invocations": invocations.get("Invoker", 0),
        "submit_s": round(submitted_s, 1),
        "wall_s": round(wall_s, 1),
        "throughput_jobs_per_min": round(len(terminal) / wall_s * 60, 1),
        "latency_s": spread(latencies, 2),
        "latency_from_submit_s": spread(from_submit, 2),
        "stage_median_s": {
            name: round(statistics.median(values), 2) if values else None
            for name, values in stages.items()
        },
        "ocr_ms_median": round(statistics.median(ocr_ms), 1) if ocr_ms else None,
        "peak_rss_mib": round(memory.peak_mib),
        "rss_samples": memory.samples,
        "cer_sample": {
            "jobs": len(cers),
            "mean": round(statistics.fmean(cers), 4) if cers else None,
            "max": round(max(cers), 4) if cers else None,
        },
        "load_average_1m": {"start": load_at_start, "end": round(os.getloadavg()[0], 2)},
    }


def print_table(report: dict[str, Any]) -> None:
    latency = report["latency_s"]
    from_submit = report["latency_from_submit_s"]
    cer = report["cer_sample"]
    statuses = ", ".join(f"{k} {v}" for k, v in report["statuses"].items()) or "none"
    rows = [
        ("jobs submitted", f"{report['count']}"),
        ("terminal statuses", statuses),
        ("lost jobs (not terminal at the end)", f"{report['lost_jobs']}"),
        ("duplicate OCR runs", f"{report['duplicate_ocr_runs']}"),
        ("DLQ messages", f"{report['dlq_messages']}"),
        ("submit time (all jobs)", f"{report['submit_s']} s"),
        ("wall time (first submit → last terminal)", f"{report['wall_s']} s"),
        ("throughput", f"{report['throughput_jobs_per_min']} jobs/min"),
        ("latency created_at → finished_at p50 / p95", f"{latency['p50']} s / {latency['p95']} s"),
        (
            "latency submit → finished_at p50 / p95",
            f"{from_submit['p50']} s / {from_submit['p95']} s",
        ),
        *(
            (f"  median {name.replace('_', ' ')}", f"{value} s")
            for name, value in report["stage_median_s"].items()
        ),
        ("OCR time per page (median)", f"{report['ocr_ms_median']} ms"),
        ("peak RSS (process tree)", f"{report['peak_rss_mib']} MiB"),
        (
            "load average (1 min) at start / end",
            f"{report['load_average_1m']['start']} / {report['load_average_1m']['end']}",
        ),
        (f"CER on {cer['jobs']} sampled results (mean / max)", f"{cer['mean']} / {cer['max']}"),
        (
            "processor concurrency / invoker batch",
            f"{report['settings']['processor_concurrency']} / "
            f"{report['settings']['invoker_batch_size']}",
        ),
    ]
    print_rows(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500, help="documents to submit")
    parser.add_argument("--processor-concurrency", type=int, default=2)
    parser.add_argument("--invoker-batch-size", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait at most")
    parser.add_argument("--cer-sample", type=int, default=25, help="results to check for CER")
    add_pipeline_arguments(parser, results=RESULTS)
    args = parser.parse_args()
    if args.count < 1:
        parser.error("--count must be at least 1")

    report = run_and_report(args, "idp-load-", run, print_table)
    return 1 if report["lost_jobs"] or report["duplicate_ocr_runs"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
