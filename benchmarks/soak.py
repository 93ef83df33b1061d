"""Soak of the local pipeline: load and faults at once, documents dropped into S3 as a user would.

Starts a LocalPipeline (embedded AWS on loopback, real handlers, real PP-OCRv5 on the offline
weights) with faults armed at stated rates, uploads --count documents into the input bucket
under input/PP-OCRv5/soak/ (boto3's upload_file, which is what `aws s3 cp` does; the bucket's
notification is the job), and waits until every document's job is terminal. The documents:

- about 10 % long PDFs of 30-120 pages that fan out into chunks of 10 pages: most born-digital
  (read from their text layer), one in five scanned (30-45 image pages, OCR'd);
- a few bad files (a truncated PDF, an empty PNG, text named .jpg, HTML named .tiff);
- the rest one-line PNG pages.

The faults, at once: about 5 % of processor invocations die mid-job (every 20th, until the
planned number has fired); one chunk of one scanned long PDF dies on every attempt (that job
must end FAILED naming its pages); the first chunk events arrive twice; one merge dies right
after it claimed the merge; every 40th DynamoDB write through the proxy is throttled.

Reports terminal statuses and error codes, outcomes that differ from what each document should
get, lost documents (no terminal job), documents that became two jobs, jobs merged twice (claimed
by two invocations), job-finished events per job (missing, duplicated), the DLQ depth, pages per
minute, p50/p95 latency, the process tree's peak memory, the CER of a sample of results, and how
often each fault fired. Prints a table; writes benchmarks/results/soak.json. A benchmark, not a
test: it exits non-zero on any lost document, double merge, or missing or duplicate event.

    .venv/bin/python -m benchmarks.soak [--count 500] [--processor-concurrency 2]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import random
import statistics
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchmarks.load import FONT_SIZE, PAGE_SIZE, MemorySampler, page_text
from benchmarks.measure import seconds_between, spread
from benchmarks.reporting import add_pipeline_arguments, print_rows, run_and_report
from devkit.local.faults import Faults
from devkit.local.pipeline import LocalPipeline
from devkit.local.settings import LocalSettings
from devkit.synthetic import encode, long_pdf, render_page
from devkit.synthetic_pdf import PageSpec, born_digital_pdf, page_lines
from devkit.textmetrics import character_error_rate
from idp.contract.job_record import JobRecord
from idp.contract.names import JobStatus

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "benchmarks" / "results" / "soak.json"
PREFIX = "input/PP-OCRv5/soak/"
LONG_SHARE = 0.10
SCANNED_SHARE = 0.2  # of the long PDFs
CHUNK_PAGES = 10
PROCESSOR_CRASH_EVERY = 20  # 5 % of processor invocations
DYNAMODB_THROTTLE_EVERY = 40
CRASHING_CHUNK = 1  # pages 11-20 of the chosen long PDF
# Every attempt of that chunk: Lambda's 3 of each delivery, and a duplicated delivery's too.
CHUNK_CRASHES = 12

Kind = Literal["page", "born-digital", "scanned", "bad", "crashing-chunk"]
BAD_FILES: dict[str, bytes] = {
    "bad-truncated.pdf": b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\nendobj\n",
    "bad-empty.png": b"",
    "bad-text.jpg": b"this is a note, not a photograph\n",
    "bad-page.tiff": b"<html><body>not a scan</body></html>\n",
}


@dataclass
class Doc:
    path: Path
    kind: Kind
    texts: list[str] = field(default_factory=list)  # each page's text, where it is known

    @property
    def key(self) -> str:
        return PREFIX + self.path.name

    @property
    def expected(self) -> JobStatus:
        return JobStatus.FAILED if self.kind in ("bad", "crashing-chunk") else JobStatus.COMPLETED


def make_documents(count: int, folder: Path, rng: random.Random) -> list[Doc]:
    """The corpus, shuffled so that long PDFs and bad files arrive among the pages."""
    folder.mkdir(parents=True, exist_ok=True)
    long_count = max(1, round(count * LONG_SHARE))
    docs: list[Doc] = []
    for index in range(long_count):
        scanned = index % round(1 / SCANNED_SHARE) == 0
        pages = rng.randint(30, 45) if scanned else rng.randint(30, 120)
        path = folder / f"long-{index:03d}-{pages}p.pdf"
        if scanned:
            data, texts = long_pdf(pages)
        else:
            specs = [PageSpec(lines=page_lines(number, 10)) for number in range(1, pages + 1)]
            data = born_digital_pdf(specs)
            texts = [spec.text for spec in specs]
        path.write_bytes(data)
        docs.append(Doc(path, "scanned" if scanned else "born-digital", texts))
    # A scanned PDF's chunk dies on every attempt (its OCR is slow enough to be caught
    # mid-chunk; a text-layer chunk may be done before the fault can strike).
    crashing = next(doc for doc in reversed(docs) if doc.kind == "scanned")
    crashing.kind = "crashing-chunk"
    for name, data in BAD_FILES.items():
        (folder / name).write_bytes(data)
        docs.append(Doc(folder / name, "bad"))
    for index in range(max(0, count - len(docs))):
        text = page_text(index)
        path = folder / f"page-{index:04d}.png"
        image = render_page([text], size=PAGE_SIZE, font_size=FONT_SIZE, margin=20)
        path.write_bytes(encode(image, "PNG"))
        docs.append(Doc(path, "page", [text]))
    rng.shuffle(docs)
    return docs


def planned_faults(docs: list[Doc]) -> Faults:
    """The faults at their rates, sized to this corpus's processor invocations."""
    invocations = sum(
        1 + math.ceil(len(doc.texts) / CHUNK_PAGES) if len(doc.texts) > CHUNK_PAGES else 1
        for doc in docs
    )
    crashing = next(doc for doc in docs if doc.kind == "crashing-chunk")
    return Faults(
        processor_crashes=max(1, round(invocations / PROCESSOR_CRASH_EVERY)),
        processor_crash_every=PROCESSOR_CRASH_EVERY,
        crash_chunk_index=CRASHING_CHUNK,
        crash_chunk_key=crashing.key,
        chunk_crashes=CHUNK_CRASHES,
        duplicate_chunk_events=max(2, len(docs) // 25),
        merge_crashes=1,
        dynamodb_write_throttles=max(5, invocations // 4),
        dynamodb_throttle_every=DYNAMODB_THROTTLE_EVERY,
    )


class Soak:
    """One run: the pipeline, the uploads, the wait, and what was observed."""

    def __init__(self, pipeline: LocalPipeline, docs: list[Doc]) -> None:
        assert pipeline.resources is not None
        self.pipeline = pipeline
        self.resources = pipeline.resources
        self.client = pipeline.client()
        self.docs = {f"s3://{self.resources.input_bucket}/{doc.key}": doc for doc in docs}
        self.events: list[dict[str, Any]] = []

    def upload(self) -> float:
        s3 = self.pipeline.endpoint.client("s3")
        started = time.monotonic()

        def drop(doc: Doc) -> None:
            s3.upload_file(
                str(doc.path),
                self.resources.input_bucket,
                doc.key,
                ExtraArgs={"Metadata": {"lang": "en"}},
            )

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(drop, self.docs.values()))
        return time.monotonic() - started

    def wait(self, timeout_s: float) -> dict[str, list[JobRecord]]:
        """Every job of each document (by input URI) once all are terminal, or at the timeout."""
        deadline = time.monotonic() + timeout_s
        last_report = 0.0
        while True:
            by_doc: dict[str, list[JobRecord]] = {}
            for record in self.client.jobs():
                uri = str(record.get("input_uri", ""))
                if uri in self.docs:
                    by_doc.setdefault(uri, []).append(record)
            self.events.extend(self.pipeline.received_events())
            done = sum(
                1
                for records in by_doc.values()
                if all(JobStatus(r["status"]).is_terminal for r in records)
            )
            if time.monotonic() - last_report > 30:
                print(f"  {done}/{len(self.docs)} documents terminal", flush=True)
                last_report = time.monotonic()
            if done == len(self.docs) or time.monotonic() > deadline:
                return by_doc
            time.sleep(3.0)

    def drain_events(self, job_ids: set[str], quiet_s: float = 10.0) -> None:
        """Until every job has an event and none came for `quiet_s` (a late duplicate shows)."""
        deadline = time.monotonic() + 120
        quiet_since = time.monotonic()
        while time.monotonic() < deadline:
            fresh = self.pipeline.received_events(wait_s=1.0)
            self.events.extend(fresh)
            if fresh:
                quiet_since = time.monotonic()
            seen = {event["detail"]["job_id"] for event in self.events}
            if job_ids <= seen and time.monotonic() - quiet_since > quiet_s:
                return

    def queue_depth(self, url: str) -> int:
        attributes = self.pipeline.endpoint.client("sqs").get_queue_attributes(
            QueueUrl=url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return sum(int(value) for value in attributes.values())

    def sample_cer(self, completed: dict[str, JobRecord], rng: random.Random) -> dict[str, Any]:
        """CER of 20 one-page results and of every page of 2 born-digital and 2 scanned PDFs."""
        cers: dict[str, list[float]] = {"page": [], "born-digital": [], "scanned": []}
        for kind, size in (("page", 20), ("born-digital", 2), ("scanned", 2)):
            of_kind = sorted(uri for uri in completed if self.docs[uri].kind == kind)
            for uri in rng.sample(of_kind, min(size, len(of_kind))):
                result = self.client.result_document(completed[uri]["job_id"])
                for expected, page in zip(self.docs[uri].texts, result["pages"], strict=True):
                    read = "\n".join(line["text"] for line in page["lines"])
                    cers[kind].append(character_error_rate(expected, read))
        return {
            kind: {
                "pages": len(values),
                "mean": round(statistics.fmean(values), 4) if values else None,
                "max": round(max(values), 4) if values else None,
            }
            for kind, values in cers.items()
        }


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="idp-soak-") as work:
        return run_in(args, Path(work))


def run_in(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    rng = random.Random(args.seed)
    load_at_start = round(os.getloadavg()[0], 2)
    docs = make_documents(args.count, work / "docs", rng)
    faults = planned_faults(docs)
    settings = LocalSettings(
        work_dir=work / "pipeline",
        models_dir=Path(args.models_dir),
        vl_enabled=False,
        processor_concurrency=args.processor_concurrency,
        chunk_pages=CHUNK_PAGES,
        faults=faults,
    )
    print(
        f"  {len(docs)} documents, {sum(max(1, len(d.texts)) for d in docs)} pages; faults: "
        f"{faults.model_dump(exclude_defaults=True)}",
        flush=True,
    )
    with MemorySampler() as memory, LocalPipeline(settings) as pipeline:
        assert pipeline.runtime is not None
        soak = Soak(pipeline, docs)
        started = time.monotonic()
        upload_s = soak.upload()
        print(f"  uploaded {len(docs)} documents in {upload_s:.1f} s", flush=True)
        by_doc = soak.wait(args.timeout)
        wall_s = time.monotonic() - started
        job_ids = {r["job_id"] for records in by_doc.values() for r in records}
        terminal_ids = {
            r["job_id"]
            for records in by_doc.values()
            for r in records
            if JobStatus(r["status"]).is_terminal
        }
        soak.drain_events(terminal_ids)
        runtime = pipeline.runtime
        lambda_faults = runtime.lambda_faults
        proxy = runtime.dynamodb_proxy
        fired = {
            "processor_crashes": lambda_faults.processor_crashes.fired,
            "chunk_crashes": lambda_faults.chunk_crashes.fired,
            "duplicate_chunk_events": lambda_faults.duplicate_chunk_events.fired,
            "merge_crashes": lambda_faults.merge_crashes.fired,
            "dynamodb_write_throttles": proxy.throttles.fired if proxy is not None else 0,
            "environments_killed": lambda_faults.kills,
        }
        merge_claims = {job: len(claims) for job, claims in runtime.stats.merge_claims.items()}
        dlq_depth = soak.queue_depth(pipeline.resources.dlq_url)  # type: ignore[union-attr]
        invocations = dict(runtime.stats.invocations)
        dropped_events = len(runtime.stats.failed_deliveries)
        final = {uri: records[-1] for uri, records in by_doc.items()}
        completed = {u: r for u, r in final.items() if r["status"] == JobStatus.COMPLETED}
        cer = soak.sample_cer(completed, rng)
        events = soak.events

    lost = sorted(
        soak.docs[uri].path.name
        for uri in soak.docs
        if uri not in final or not JobStatus(final[uri]["status"]).is_terminal
    )
    split = sorted(soak.docs[uri].path.name for uri, records in by_doc.items() if len(records) > 1)
    unexpected = sorted(
        f"{soak.docs[uri].path.name}: {record['status']} "
        f"{record.get('error', {}).get('code', '')}".strip()
        for uri, record in final.items()
        if JobStatus(record["status"]).is_terminal and record["status"] != soak.docs[uri].expected
    )
    per_job = Counter(event["detail"]["job_id"] for event in events)
    distinct_ids = Counter(
        job for job, _ in {(e["detail"]["job_id"], e["detail"]["event_id"]) for e in events}
    )
    missing_events = sorted(terminal_ids - set(per_job))
    duplicate_events = sorted(job for job, count in distinct_ids.items() if count > 1)
    redelivered = sum(per_job.values()) - sum(distinct_ids.values())
    merged_twice = sorted(job for job, claims in merge_claims.items() if claims > 1)
    statuses = Counter(str(r["status"]) for r in final.values())
    codes = Counter(
        str(r.get("error", {}).get("code")) for r in final.values() if r["status"] == "FAILED"
    )
    pages_read = sum(int(r.get("page_count", 0)) for r in completed.values())
    latency: dict[str, list[float]] = {"page": [], "long": []}
    for uri, record in final.items():
        if JobStatus(record["status"]).is_terminal and "finished_at" in record:
            group = "page" if soak.docs[uri].kind in ("page", "bad") else "long"
            latency[group].append(seconds_between(record, "created_at", "finished_at"))
    kinds = Counter(doc.kind for doc in soak.docs.values())
    return {
        "documents": len(soak.docs),
        "kinds": dict(sorted(kinds.items())),
        "pages_submitted": sum(max(1, len(doc.texts)) for doc in soak.docs.values()),
        "settings": {
            "processor_concurrency": args.processor_concurrency,
            "chunk_pages": CHUNK_PAGES,
            "timeout_s": args.timeout,
            "seed": args.seed,
        },
        "faults_planned": faults.model_dump(exclude_defaults=True),
        "faults_fired": fired,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "statuses": dict(sorted(statuses.items())),
        "error_codes": dict(sorted(codes.items())),
        "unexpected_outcomes": unexpected,
        "lost_documents": lost,
        "documents_with_two_jobs": split,
        "jobs_merged_twice": merged_twice,
        "merges_observed": len(merge_claims),
        "events": {
            "received": sum(per_job.values()),
            "jobs_with_one": sum(1 for job in terminal_ids if distinct_ids.get(job) == 1),
            "missing": missing_events,
            "duplicate": duplicate_events,
            "redelivered_same_event_id": redelivered,
        },
        "dlq_messages": dlq_depth,
        "events_dropped_after_retries": dropped_events,
        "invocations": invocations,
        "jobs": len(job_ids),
        "upload_s": round(upload_s, 1),
        "wall_s": round(wall_s, 1),
        "pages_read": pages_read,
        "pages_per_min": round(pages_read / wall_s * 60, 1),
        "latency_s": {group: spread(values, 1) for group, values in latency.items()},
        "peak_rss_mib": round(memory.peak_mib),
        "cer_sample": cer,
        "load_average_1m": {"start": load_at_start, "end": round(os.getloadavg()[0], 2)},
    }


def failures(report: dict[str, Any]) -> list[str]:
    """What makes the run fail: loss, a double merge, a missing or duplicated event."""
    found = []
    if report["lost_documents"]:
        found.append(f"{len(report['lost_documents'])} documents lost")
    if report["jobs_merged_twice"]:
        found.append(f"{len(report['jobs_merged_twice'])} jobs merged twice")
    if report["events"]["missing"]:
        found.append(f"{len(report['events']['missing'])} jobs without an event")
    if report["events"]["duplicate"]:
        found.append(f"{len(report['events']['duplicate'])} jobs with two events")
    return found


def print_table(report: dict[str, Any]) -> None:
    events = report["events"]
    latency = report["latency_s"]
    fired = ", ".join(f"{k} {v}" for k, v in report["faults_fired"].items())
    cer = "; ".join(
        f"{kind} {v['mean']} ({v['pages']} pages)"
        for kind, v in report["cer_sample"].items()
        if v["pages"]
    )
    rows = [
        ("documents (kinds)", f"{report['documents']} ({report['kinds']})"),
        ("pages submitted", f"{report['pages_submitted']}"),
        ("faults fired", fired),
        ("terminal statuses", f"{report['statuses']}"),
        ("error codes", f"{report['error_codes']}"),
        ("unexpected outcomes", f"{len(report['unexpected_outcomes'])}"),
        ("lost documents", f"{len(report['lost_documents'])}"),
        ("documents that became two jobs", f"{len(report['documents_with_two_jobs'])}"),
        (
            "jobs merged twice (of merges)",
            f"{len(report['jobs_merged_twice'])} (of {report['merges_observed']})",
        ),
        (
            "events: received / jobs with exactly one",
            f"{events['received']} / {events['jobs_with_one']} of {report['jobs']}",
        ),
        (
            "events: missing / duplicate / redelivered",
            f"{len(events['missing'])} / {len(events['duplicate'])} / "
            f"{events['redelivered_same_event_id']}",
        ),
        ("job DLQ messages", f"{report['dlq_messages']}"),
        (
            "async events dropped after all retries",
            f"{report['events_dropped_after_retries']}",
        ),
        ("upload time", f"{report['upload_s']} s"),
        ("wall time (first upload → last terminal)", f"{report['wall_s']} s"),
        ("pages read / per minute", f"{report['pages_read']} / {report['pages_per_min']}"),
        (
            "latency one page p50 / p95",
            f"{latency['page']['p50']} s / {latency['page']['p95']} s",
        ),
        (
            "latency long PDF p50 / p95",
            f"{latency['long']['p50']} s / {latency['long']['p95']} s",
        ),
        ("peak RSS (process tree)", f"{report['peak_rss_mib']} MiB"),
        ("CER of a sample (mean)", cer),
    ]
    print_rows(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500, help="documents to drop")
    parser.add_argument("--processor-concurrency", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds to wait at most")
    parser.add_argument("--seed", type=int, default=7)
    add_pipeline_arguments(parser, results=RESULTS)
    args = parser.parse_args()
    if args.count < 10:
        parser.error("--count must be at least 10 (a long PDF, the bad files and pages)")

    report = run_and_report(args, "idp-soak-", run, print_table)
    found = failures(report)
    for failure in found:
        print(f"FAILED: {failure}")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
