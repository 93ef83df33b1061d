"""`idp local run|up`: the whole pipeline on this machine, on the embedded AWS emulator."""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from devkit.cli.common import (
    JsonOption,
    LangOption,
    ModelOption,
    TextLayerOption,
    TextModelOption,
    configure_logging,
    err,
    job_model,
    jobs_table,
    out,
    status_style,
)
from devkit.client import JobProgress, PipelineClient
from idp.contract import names
from idp.contract.job_record import JobRecord
from idp.contract.jobs import JobOptions
from idp.contract.languages import DEFAULT_LANGUAGE
from idp.contract.names import JobStatus, TextLayerMode

if TYPE_CHECKING:
    from devkit.local.pipeline import LocalPipeline

local_app = typer.Typer(help="Run the whole pipeline on this machine (embedded AWS emulator).")


@local_app.command("run")
def local_run(
    paths: Annotated[list[Path], typer.Argument(help="documents to OCR", exists=True)],
    model: ModelOption = None,
    lang: LangOption = DEFAULT_LANGUAGE,
    text_layer: TextLayerOption = TextLayerMode.AUTO,
    text_model: TextModelOption = None,
    out_dir: Annotated[Path, typer.Option("--out", help="where results are downloaded")] = Path(
        "idp-results"
    ),
    as_json: JsonOption = False,
    vl_substitute: Annotated[
        bool,
        typer.Option(
            "--vl-substitute",
            help="run PaddleOCR-VL jobs through the VL plumbing with the PP-OCRv5 substitute "
            "engine (recorded as such in the result); without it they need the VL weights",
        ),
    ] = False,
    timeout: Annotated[float, typer.Option(help="seconds to wait for all jobs")] = 1800.0,
    workers: Annotated[
        int, typer.Option(help="processor execution environments (Lambda's concurrency)", min=1)
    ] = 2,
    chunk_pages: Annotated[
        int,
        typer.Option(help="a longer document is OCR'd in chunks of this many pages (0: never)"),
    ] = names.DEFAULT_CHUNK_PAGES,
    overlay_page: Annotated[
        int, typer.Option("--overlay-page", help="draw this page's boxes to a PNG (0: none)")
    ] = 1,
    events_file: Annotated[
        Path | None,
        typer.Option(
            "--events",
            help="write the job-finished events a subscriber of the event bus would receive "
            "(EventBridge envelopes, one JSON object per line) to this file",
        ),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
) -> None:
    """Start the emulator, seed the model cache, run the documents, download results, stop.

    Exits 0 only if every job COMPLETED.
    """
    from devkit.local.pipeline import LocalPipeline
    from devkit.local.settings import LocalSettings

    configure_logging(verbose)
    ocr_model = job_model(model, lang)
    models_dir = Path(os.environ.get("IDP_MODELS_DIR", ".models"))
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="idp-local-") as work:
        settings = LocalSettings(
            work_dir=Path(work),
            models_dir=models_dir if models_dir.is_dir() else None,
            vl_substitute=vl_substitute,
            quiet_functions=not verbose,
            processor_concurrency=workers,
            chunk_pages=chunk_pages,
        )
        err.print(f"[bold]starting[/] the embedded AWS and the local runtime ({work})")
        with LocalPipeline(settings) as pipeline:
            client = pipeline.client()
            options = JobOptions(text_layer=text_layer, text_model=text_model)
            submitted = [
                client.submit(p, model=ocr_model, lang=lang, options=options) for p in paths
            ]
            records = _wait_with_progress(client, [s.job_id for s in submitted], timeout)
            if events_file is not None:
                _write_events(pipeline, {s.job_id for s in submitted}, events_file)
            for item in submitted:
                record = records.get(item.job_id)
                result_path: Path | None = None
                overlay_path: Path | None = None
                if record and record.get("status") == JobStatus.COMPLETED:
                    result_path = client.download_result(item.job_id, out_dir)
                    if overlay_page:
                        overlay_path = _save_overlay(client, record, result_path, overlay_page)
                rows.append(
                    {
                        "file": str(item.file),
                        "job_id": item.job_id,
                        "status": record["status"] if record else "UNKNOWN",
                        "error": record.get("error") if record else None,
                        "pages": record.get("page_count") if record else None,
                        "result": str(result_path) if result_path else None,
                        "record": record,
                        "overlay": overlay_path,
                    }
                )
    if as_json:
        public = ("file", "job_id", "status", "error", "pages", "result")
        print(json.dumps([{key: row[key] for key in public} for row in rows]))
    else:
        shown = [row["record"] or JobRecord(job_id=row["job_id"], status="UNKNOWN") for row in rows]
        out.print(jobs_table(shown, "jobs"))
        for row in rows:
            if row["result"]:
                _print_result_summary(row["file"], Path(row["result"]), row["overlay"])
    if not all(row["status"] == JobStatus.COMPLETED for row in rows):
        raise typer.Exit(code=1)


def _write_events(pipeline: LocalPipeline, job_ids: set[str], path: Path) -> None:
    """The events of these jobs, as delivered (waiting a little: they follow the status write)."""
    received: list[dict[str, Any]] = []
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        received += pipeline.received_events(wait_s=1.0)
        if job_ids <= {event["detail"]["job_id"] for event in received}:
            break
    received += pipeline.received_events(wait_s=1.0)  # and any late duplicate
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(event) + "\n" for event in received))
    err.print(f"{len(received)} job-finished events → {path}")


def _save_overlay(
    client: PipelineClient, record: JobRecord, result_path: Path, page: int
) -> Path | None:
    from devkit.overlay import render_overlay

    document = json.loads(result_path.read_text())
    if page > len(document.get("pages", [])):
        return None
    target = result_path.parent / f"page-{page}-overlay.png"
    options = JobOptions.model_validate(record.get("options") or {})
    pages_pdf = result_path.parent / names.RESULT_PDF
    if (document.get("source") or {}).get("conversion") is not None:
        # An Office document's pages are its conversion: result.pdf shows them.
        if not pages_pdf.is_file():
            return None
        pages = pages_pdf.read_bytes()
    else:
        pages = client.input_bytes(record)
    render_overlay(pages, document, page, options=options).save(target)
    return target


def _print_result_summary(file: str, result_path: Path, overlay_path: Path | None) -> None:
    document = json.loads(result_path.read_text())
    first = (document.get("pages") or [{}])[0]
    text = "\n".join(line["text"] for line in first.get("lines", []))
    out.rule(f"{file}: page 1 of {len(document.get('pages', []))} ({document['engine']['name']})")
    out.print(text or "(no text recognized)", markup=False, highlight=False)
    for page in document.get("pages", []):
        quality = page.get("quality") or {}
        if quality.get("verdict") == "review":
            reasons = ", ".join(quality.get("reasons", []))
            out.print(f"[yellow]review page {page['page']}[/]: {reasons}")
    out.print(f"result: {result_path}")
    searchable = result_path.with_name(names.RESULT_PDF)
    if searchable.exists():
        out.print(f"searchable PDF: {searchable}")
    if overlay_path:
        out.print(f"overlay of page 1: {overlay_path}")


def _wait_with_progress(
    client: PipelineClient, job_ids: list[str], timeout: float
) -> dict[str, JobRecord | None]:
    """One bar for the jobs, and one per job counting its pages once the total is known."""
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} {task.fields[unit]}"),
        TimeElapsedColumn(),
        console=err,
    ) as progress:
        jobs_task = progress.add_task("OCR jobs", total=len(job_ids), unit="done")
        page_tasks: dict[str, TaskID] = {}

        def on_change(job_id: str, record: JobRecord) -> None:
            status = str(record.get("status"))
            if JobStatus(status).is_terminal:
                progress.advance(jobs_task)
            progress.console.print(f"  {job_id[:12]} → [{status_style(status)}]{status}[/]")

        def on_poll(job_id: str, record: JobRecord) -> None:
            done = JobProgress.of(record)
            if done.pages_total is None or done.pages_total < 2:
                return
            if job_id not in page_tasks:
                page_tasks[job_id] = progress.add_task(
                    f"  {job_id[:12]} pages", total=done.pages_total, unit="pages"
                )
            progress.update(page_tasks[job_id], completed=done.pages_done)

        return client.wait(job_ids, timeout_s=timeout, on_change=on_change, on_poll=on_poll)


@local_app.command("up")
def local_up(
    vl_substitute: Annotated[
        bool,
        typer.Option(
            "--vl-substitute",
            help="serve PaddleOCR-VL with the PP-OCRv5 substitute engine (no VL weights here)",
        ),
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="print the names as one JSON line on stdout once everything runs"
        ),
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
) -> None:
    """Keep the emulator and runtime running until Ctrl-C (or SIGTERM); print how to reach them."""
    from devkit.local.pipeline import LocalPipeline
    from devkit.local.settings import LocalSettings

    configure_logging(verbose)
    # A supervisor (CI, a test, `docker stop`) stops with SIGTERM: shut down as on Ctrl-C, so
    # the function workers and the VL container server stop with us.
    signal.signal(signal.SIGTERM, _interrupt)
    models_dir = Path(os.environ.get("IDP_MODELS_DIR", ".models"))
    with tempfile.TemporaryDirectory(prefix="idp-local-") as work:
        settings = LocalSettings(
            work_dir=Path(work),
            models_dir=models_dir if models_dir.is_dir() else None,
            vl_substitute=vl_substitute,
        )
        with LocalPipeline(settings) as pipeline:
            resources, runtime = pipeline.resources, pipeline.runtime
            if resources is None or runtime is None:
                raise RuntimeError("the local pipeline is not started")
            url = pipeline.endpoint.url
            # The two APIs the emulator cannot run (Lambda Invoke, SageMaker Runtime
            # InvokeEndpointAsync) are served by the local runtime on a URL of their own.
            described = {
                "endpoint_url": url,
                "runtime_api_url": runtime.api.url,
                "input_bucket": resources.input_bucket,
                "results_bucket": resources.results_bucket,
                "model_cache_bucket": resources.model_cache_bucket,
                "jobs_table": resources.jobs_table,
                "job_queue_url": resources.queue_url,
                "dlq_url": resources.dlq_url,
                "vl_endpoint": resources.vl_endpoint,
            }
            if as_json:
                print(json.dumps(described), flush=True)
            else:
                _print_local_up(described, resources.input_bucket)
            try:
                while True:
                    time.sleep(1)
            except KeyboardInterrupt:
                err.print("stopping")


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _print_local_up(described: dict[str, Any], input_bucket: str) -> None:
    url = described["endpoint_url"]
    labels = {
        "endpoint_url": "endpoint url",
        "runtime_api_url": "Lambda + SageMaker Runtime API",
        "input_bucket": "input bucket",
        "results_bucket": "results bucket",
        "model_cache_bucket": "model cache",
        "jobs_table": "jobs table",
        "job_queue_url": "job queue",
        "dlq_url": "dead-letter queue",
        "vl_endpoint": "VL endpoint",
    }
    table = Table(title="local pipeline", show_header=False)
    table.add_column("what", no_wrap=True)
    table.add_column("value", overflow="fold")
    for key, label in labels.items():
        table.add_row(label, str(described[key]))
    out.print(table)
    out.print(
        "Try:\n"
        "  export AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local "
        "AWS_DEFAULT_REGION=us-east-1\n"
        f"  aws --endpoint-url {url} s3 cp FILE "
        f"s3://{input_bucket}/input/PP-OCRv5/FILE\n"
        f"  idp jobs --endpoint-url {url}\n"
        f"  idp smoke --endpoint-url {url}\n"
        f"  idp endpoint status --endpoint-url {url}\n"
        "Ctrl-C stops everything.",
        soft_wrap=True,
    )
