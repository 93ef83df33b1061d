"""Dollars per 1,000 pages: Lambda compute measured per page, AWS requests counted per job.

    .venv/bin/python -m benchmarks.cost [--pages 30] [--chunk-pages 10]

Compute: GB-seconds per page = the processor's warm seconds per page (benchmarks/results/
processor.json: 1700×2200 pages of 30 lines, measured by benchmarks/processor.py) × the
stack's processor memory (idp.contract.PROCESSOR_MEMORY_MB). PP-StructureV3's seconds per page
are the median page measured in the processor image (benchmarks/results/structure_image.json,
by benchmarks/structure_image.py: tables, forms and two-column papers, the CDLA layout model in
PP-DocLayout's place); a second row estimates the cloud's layout model: PP-DocLayout_plus-L is
an RT-DETR-L of 126 MB (about 31 M parameters, 17× the CDLA model's 7.4 MB), published at
635 ms a page on PaddleX's reference CPU, so `--doclayout-extra-s` (default 1.5 s) is added
per page, an estimate until the cache holds it and structure_image.py measures it.

Requests: one job of `--pages` pages (chunked when longer than `--chunk-pages`) and one
single-page job run through the local pipeline, with every request to the embedded AWS counted
by service and operation, and every Lambda invocation counted by the local runtime. Left out,
because they are not per job: the event source's and the local SNS delivery's SQS polls
(ReceiveMessage), the stale-job sweeper's schedule, and this script's own status polls.

PaddleOCR-VL is priced from pages per hour on one ml.g5.xlarge (`--vl-pages-per-hour`, an
estimate until benchmarks/vl_gpu.py measures it on a GPU), at full use of the instance.
Textract's list prices stand beside them. Prices: us-east-1 list prices read 2026-11-22.
Writes benchmarks/results/cost.json. Figures from one run; never asserted.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import statistics
import tempfile
import threading
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any, Final

from benchmarks.reporting import write_results
from devkit.local.pipeline import LocalPipeline
from devkit.local.settings import LocalSettings
from devkit.synthetic import long_pdf
from idp.contract import names
from idp.contract.names import JobStatus, OcrModel
from idp.contract.topology import PROCESSOR_MEMORY_MB

RESULTS_DIR = Path(__file__).parent / "results"
_PRICES: Final = tomllib.loads((Path(__file__).parent / "prices.toml").read_text())
PRICES_READ: Final = str(_PRICES["read"])
PRICES: Final[dict[str, float]] = _PRICES["usd"]
_SCOPE = re.compile(r"Credential=[^/]+/[^/]+/[^/]+/([^/]+)/aws4_request")
_LEFT_OUT: Final = {("sqs", "ReceiveMessage"), ("dynamodb", "Query")}


class RequestCounter:
    """Counts requests reaching the embedded AWS (moto's server runs in this process)."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()

    def install(self) -> None:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication

        original = DomainDispatcherApplication.__call__
        counter = self

        def counted(app: Any, environ: dict[str, Any], start_response: Any) -> Any:
            counter.record(environ)
            return original(app, environ, start_response)

        DomainDispatcherApplication.__call__ = counted  # type: ignore[method-assign,assignment]

    def record(self, environ: dict[str, Any]) -> None:
        scope = _SCOPE.search(environ.get("HTTP_AUTHORIZATION", ""))
        service = scope.group(1) if scope else "?"
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        if target:
            operation = target.rsplit(".", 1)[-1]
        elif service == "s3":
            method = environ.get("REQUEST_METHOD", "GET")
            query = environ.get("QUERY_STRING", "")
            listing = method == "GET" and ("list-type" in query or "prefix=" in query)
            operation = "LIST" if listing else method
        else:
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = environ["wsgi.input"].read(length) if length else b""
            environ["wsgi.input"] = io.BytesIO(body)
            found = re.search(
                rb"Action=([A-Za-z]+)", body + environ.get("QUERY_STRING", "").encode()
            )
            operation = found.group(1).decode() if found else "?"
        with self._lock:
            self.counts[(service, operation)] += 1

    def take(self) -> Counter[tuple[str, str]]:
        with self._lock:
            counts, self.counts = self.counts, Counter()
        return counts


def measure_job(pipeline: LocalPipeline, counter: RequestCounter, path: Path) -> dict[str, Any]:
    client = pipeline.client()
    assert pipeline.runtime is not None
    polls = Counter[str]()
    original_get = client.store.get

    def counted_get(job_id: str) -> Any:
        polls["GetItem"] += 1
        return original_get(job_id)

    client.store.get = counted_get  # type: ignore[method-assign]
    invocations_before = Counter(pipeline.runtime.stats.invocations)
    counter.take()
    submitted = client.submit(path, model=OcrModel.PP_OCRV5)
    record = client.wait([submitted.job_id], timeout_s=1800, poll_s=1.0)[submitted.job_id]
    if record is None or record["status"] != JobStatus.COMPLETED:
        raise SystemExit(f"the job did not complete: {record}")
    counts = counter.take()
    counts[("dynamodb", "GetItem")] -= polls["GetItem"]  # this script's own status polls
    counts[("s3", "PUT")] -= 1  # the upload is the user's request, not the pipeline's
    invocations = Counter(pipeline.runtime.stats.invocations) - invocations_before
    kept = {
        f"{s}:{op}": n
        for (s, op), n in sorted(counts.items())
        if (s, op) not in _LEFT_OUT and n > 0
    }
    return {
        "pages": record["page_count"],
        "chunks": record.get("chunks_total", 0),
        "requests": kept,
        "lambda_invocations": dict(invocations),
    }


def request_dollars(job: dict[str, Any]) -> float:
    requests = job["requests"]
    total = 0.0
    for key, count in requests.items():
        service, operation = key.split(":", 1)
        if service == "s3" and operation in ("PUT", "POST", "LIST"):
            total += count * PRICES["s3_put"]
        elif service == "s3" and operation != "DELETE":
            total += count * PRICES["s3_get"]
        elif service == "sqs":
            total += count * PRICES["sqs_request"]
        elif service == "sns" and operation == "Publish":
            total += count * PRICES["sns_publish"]
        elif service == "dynamodb" and operation in ("PutItem", "UpdateItem", "DeleteItem"):
            total += count * PRICES["dynamodb_write"]
        elif service == "dynamodb":
            total += count * PRICES["dynamodb_read"]
    total += sum(job["lambda_invocations"].values()) * PRICES["lambda_request"]
    return float(total)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--chunk-pages", type=int, default=names.DEFAULT_CHUNK_PAGES)
    parser.add_argument("--doclayout-extra-s", type=float, default=1.5)
    parser.add_argument("--vl-pages-per-hour", type=float, default=1000.0)
    parser.add_argument("--models-dir", type=Path, default=Path(".models"))
    args = parser.parse_args()

    processor = json.loads((RESULTS_DIR / "processor.json").read_text())
    ocr_s_per_page = float(processor["warm_page_median_s"])
    structure = json.loads((RESULTS_DIR / "structure_image.json").read_text())
    structure_s_per_page = statistics.median(page["seconds"] for page in structure["pages"])
    memory_gb = PROCESSOR_MEMORY_MB / 1024

    counter = RequestCounter()
    counter.install()
    with tempfile.TemporaryDirectory(prefix="idp-cost-") as tmp:
        work = Path(tmp)
        long_doc, _ = long_pdf(args.pages)
        short_doc, _ = long_pdf(1)
        (work / "long.pdf").write_bytes(long_doc)
        (work / "one-page.pdf").write_bytes(short_doc)
        settings = LocalSettings(
            work_dir=work / "pipeline",
            models_dir=args.models_dir,
            vl_enabled=False,
            processor_concurrency=2,
            chunk_pages=args.chunk_pages,
            quiet_functions=True,
            sweep_interval_seconds=3600,
        )
        with LocalPipeline(settings) as pipeline:
            single = measure_job(pipeline, counter, work / "one-page.pdf")
            chunked = measure_job(pipeline, counter, work / "long.pdf")

    per_page_requests = request_dollars(chunked) / chunked["pages"]
    single_page_requests = request_dollars(single)

    def lambda_row(model: str, s_per_page: float, measured: bool) -> dict[str, Any]:
        compute = s_per_page * memory_gb * PRICES["lambda_gb_s"]
        return {
            "model": model,
            "backend": f"Lambda {PROCESSOR_MEMORY_MB} MB",
            "s_per_page": s_per_page,
            "gb_s_per_page": round(s_per_page * memory_gb, 2),
            "usd_per_1000_pages": round(1000 * (compute + per_page_requests), 3),
            "usd_per_1000_single_page_jobs": round(1000 * (compute + single_page_requests), 3),
            "measured": measured,
        }

    rows = [
        lambda_row("PP-OCRv5", ocr_s_per_page, True),
        lambda_row("PP-StructureV3 (CDLA layout substitute)", structure_s_per_page, True),
        lambda_row(
            "PP-StructureV3 (PP-DocLayout_plus-L, estimate)",
            structure_s_per_page + args.doclayout_extra_s,
            False,
        ),
        {
            "model": "PaddleOCR-VL",
            "backend": "SageMaker ml.g5.xlarge, fully used",
            "pages_per_hour": args.vl_pages_per_hour,
            "usd_per_1000_pages": round(
                1000 * PRICES["g5_xlarge_hour"] / args.vl_pages_per_hour, 3
            ),
            "measured": False,
        },
        {"model": "Textract DetectDocumentText", "usd_per_1000_pages": 1.5, "measured": False},
        {
            "model": "Textract AnalyzeDocument (Tables + Layout)",
            "usd_per_1000_pages": 20.0,
            "measured": False,
        },
    ]
    report = {
        "prices_read": PRICES_READ,
        "region": "us-east-1",
        "prices": PRICES,
        "single_page_job": single,
        "chunked_job": chunked,
        "requests_usd_per_page_chunked": per_page_requests,
        "requests_usd_per_single_page_job": single_page_requests,
        "rows": rows,
    }
    print(
        f"\nrequests per job, counted ({args.pages} pages in {chunked['chunks']} chunks / 1 page)"
    )
    keys = sorted(set(chunked["requests"]) | set(single["requests"]))
    for key in keys:
        long_count, short_count = chunked["requests"].get(key, 0), single["requests"].get(key, 0)
        print(f"  {key:<28} {long_count:>5} / {short_count:>3}")
    print(
        f"  {'lambda invocations':<28} {sum(chunked['lambda_invocations'].values()):>5} / "
        f"{sum(single['lambda_invocations'].values()):>3}"
    )
    print(f"\n{'model':<44} {'$ / 1,000 pages':>16}  basis")
    for row in rows:
        basis = "measured" if row["measured"] else "estimate / list price"
        print(f"{row['model']:<44} {row['usd_per_1000_pages']:>16.3f}  {basis}")
    RESULTS_DIR.mkdir(exist_ok=True)
    write_results(report, RESULTS_DIR / "cost.json")
    print(f"\nprices: {PRICES_READ}, us-east-1; written to {RESULTS_DIR / 'cost.json'}")


if __name__ == "__main__":
    main()
