"""`idp`: local runs on the embedded AWS, and jobs against a deployed stack or a local emulator."""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer
from rich import box
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from idp import names
from idp.cli.common import (
    EndpointOption,
    JsonOption,
    LangOption,
    ModelOption,
    RegionOption,
    StackOption,
    TextLayerOption,
    aws_endpoint,
    client_for,
    configure_logging,
    err,
    out,
    parse_model,
    status_style,
)
from idp.cli.endpoint import endpoint_app
from idp.cli.smoke import smoke
from idp.client import JobProgress, PipelineClient
from idp.jobs import JobOptions
from idp.names import JobStatus, OcrModel, TextLayerMode

app = typer.Typer(
    help="Serverless document OCR with PaddleOCR: local runs and job tools.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
local_app = typer.Typer(help="Run the whole pipeline on this machine (embedded AWS emulator).")
models_app = typer.Typer(help="Fill and inspect the S3 model cache.")
app.add_typer(local_app, name="local")
app.add_typer(models_app, name="models")
app.add_typer(endpoint_app, name="endpoint")
app.command()(smoke)


def _error_text(record: dict[str, Any] | None) -> str:
    error = (record or {}).get("error")
    return f"{error['code']}: {error['message']}" if isinstance(error, dict) else ""


def _jobs_table(records: list[dict[str, Any]], title: str) -> Table:
    """Jobs as a table; errors follow as the table's caption so narrow terminals stay readable."""
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, caption_justify="left")
    for column in ("job", "status", "model", "lang", "pages", "file", "ms"):
        table.add_column(column, no_wrap=True)
    # pages: done/total (and chunks) while a job runs, the page count once it has ended
    errors = []
    for record in records:
        status = str(record.get("status", "?"))
        timings = record.get("timings_ms") or {}
        total = timings.get("total")
        job = str(record.get("job_id", ""))[:12]
        table.add_row(
            job,
            f"[{status_style(status)}]{status}[/]",
            str(record.get("model", "")),
            str(record.get("lang", "")),
            _pages_cell(record),
            str(record.get("input_key", "")).rsplit("/", 1)[-1][:24],
            f"{total:.0f}" if isinstance(total, int | float) else "",
        )
        if record.get("error"):
            errors.append(f"{job}: {_error_text(record)}")
    if errors:
        table.caption = "\n".join(errors)
    return table


def _pages_cell(record: dict[str, Any]) -> str:
    if JobStatus(str(record.get("status", "QUEUED"))).is_terminal or "pages_total" not in record:
        return str(record.get("page_count", ""))
    return JobProgress.of(record).describe()


# -- local ---------------------------------------------------------------------------------------
@local_app.command("run")
def local_run(
    paths: Annotated[list[Path], typer.Argument(help="documents to OCR", exists=True)],
    model: ModelOption = OcrModel.PP_OCRV5.value,
    lang: LangOption = names.DEFAULT_LANGUAGE,
    text_layer: TextLayerOption = TextLayerMode.AUTO,
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
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
) -> None:
    """Start the emulator, seed the model cache, run the documents, download results, stop.

    Exits 0 only if every job COMPLETED.
    """
    from idp.local.pipeline import LocalPipeline
    from idp.local.settings import LocalSettings

    configure_logging(verbose)
    ocr_model = parse_model(model)
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
            options = JobOptions(text_layer=text_layer)
            submitted = [
                client.submit(p, model=ocr_model, lang=lang, options=options) for p in paths
            ]
            records = _wait_with_progress(client, [s.job_id for s in submitted], timeout)
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
                        "status": (record or {}).get("status", "UNKNOWN"),
                        "error": (record or {}).get("error"),
                        "pages": (record or {}).get("page_count"),
                        "result": str(result_path) if result_path else None,
                        "record": record,
                        "overlay": overlay_path,
                    }
                )
    if as_json:
        public = ("file", "job_id", "status", "error", "pages", "result")
        print(json.dumps([{key: row[key] for key in public} for row in rows]))
    else:
        out.print(_jobs_table([row["record"] or {"job_id": row["job_id"]} for row in rows], "jobs"))
        for row in rows:
            if row["result"]:
                _print_result_summary(row["file"], Path(row["result"]), row["overlay"])
    if not all(row["status"] == JobStatus.COMPLETED for row in rows):
        raise typer.Exit(code=1)


def _save_overlay(
    client: PipelineClient, record: dict[str, Any], result_path: Path, page: int
) -> Path | None:
    from idp.overlay import render_overlay

    document = json.loads(result_path.read_text())
    if page > len(document.get("pages", [])):
        return None
    target = result_path.parent / f"page-{page}-overlay.png"
    options = JobOptions.model_validate(record.get("options") or {})
    render_overlay(client.input_bytes(record), document, page, options=options).save(target)
    return target


def _print_result_summary(file: str, result_path: Path, overlay_path: Path | None) -> None:
    document = json.loads(result_path.read_text())
    first = (document.get("pages") or [{}])[0]
    text = "\n".join(line["text"] for line in first.get("lines", []))
    out.rule(f"{file}: page 1 of {len(document.get('pages', []))} ({document['engine']['name']})")
    out.print(text or "(no text recognized)", markup=False, highlight=False)
    out.print(f"result: {result_path}")
    searchable = result_path.with_name(names.RESULT_PDF)
    if searchable.exists():
        out.print(f"searchable PDF: {searchable}")
    if overlay_path:
        out.print(f"overlay of page 1: {overlay_path}")


def _wait_with_progress(
    client: PipelineClient, job_ids: list[str], timeout: float
) -> dict[str, dict[str, Any] | None]:
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

        def on_change(job_id: str, record: dict[str, Any]) -> None:
            status = str(record.get("status"))
            if JobStatus(status).is_terminal:
                progress.advance(jobs_task)
            progress.console.print(f"  {job_id[:12]} → [{status_style(status)}]{status}[/]")

        def on_poll(job_id: str, record: dict[str, Any]) -> None:
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
    from idp.local.pipeline import LocalPipeline
    from idp.local.settings import LocalSettings

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
            assert resources is not None
            assert runtime is not None
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


# -- jobs against a deployed stack or a local emulator ---------------------------------------------
@app.command()
def submit(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False)],
    model: ModelOption = OcrModel.PP_OCRV5.value,
    lang: LangOption = names.DEFAULT_LANGUAGE,
    text_layer: TextLayerOption = TextLayerMode.AUTO,
    endpoint_url: EndpointOption = None,
    stack_name: StackOption = names.STACK_NAME,
    region: RegionOption = None,
    as_json: JsonOption = False,
) -> None:
    """Upload a document and queue its job; prints the job id."""
    client = client_for(endpoint_url, stack_name, region)
    submitted = client.submit(
        file, model=parse_model(model), lang=lang, options=JobOptions(text_layer=text_layer)
    )
    if as_json:
        print(json.dumps({"job_id": submitted.job_id, "key": submitted.key}))
    else:
        out.print(submitted.job_id)


@app.command()
def status(
    job_id: str,
    endpoint_url: EndpointOption = None,
    stack_name: StackOption = names.STACK_NAME,
    region: RegionOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show one job's record."""
    record = client_for(endpoint_url, stack_name, region).job(job_id)
    if record is None:
        err.print(f"[red]no job {job_id}[/]")
        raise typer.Exit(code=2)
    if as_json:
        print(json.dumps(record))
        return
    table = Table(title=f"job {job_id}", show_header=False)
    progress = JobProgress.of(record).describe()
    if progress:
        table.add_row("[bold]progress[/]", f"{progress} pages")
    for key, value in record.items():
        table.add_row(key, json.dumps(value) if isinstance(value, dict | list) else str(value))
    out.print(table)


def _since(value: str | None) -> str | None:
    """ISO-8601 timestamps pass through; `30m`, `2h`, `7d` mean that long ago."""
    if not value:
        return None
    units = {"m": "minutes", "h": "hours", "d": "days"}
    if value[-1] in units and value[:-1].isdigit():
        moment = datetime.now(UTC) - timedelta(**{units[value[-1]]: int(value[:-1])})
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return value


@app.command()
def jobs(
    status_filter: Annotated[
        JobStatus | None, typer.Option("--status", case_sensitive=False)
    ] = None,
    since: Annotated[str | None, typer.Option(help="ISO time or 30m / 2h / 7d")] = None,
    endpoint_url: EndpointOption = None,
    stack_name: StackOption = names.STACK_NAME,
    region: RegionOption = None,
    as_json: JsonOption = False,
) -> None:
    """List jobs, newest first."""
    records = client_for(endpoint_url, stack_name, region).jobs(
        status=status_filter, since=_since(since)
    )
    if as_json:
        print(json.dumps(records))
    else:
        out.print(_jobs_table(records, f"{len(records)} jobs"))


@app.command()
def result(
    job_id: str,
    out_dir: Annotated[Path | None, typer.Option("--out", help="save files here")] = None,
    endpoint_url: EndpointOption = None,
    stack_name: StackOption = names.STACK_NAME,
    region: RegionOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print a job's recognized text (or save result.json, result.md, result.pdf with --out)."""
    client = client_for(endpoint_url, stack_name, region)
    if out_dir is not None:
        out.print(str(client.download_result(job_id, out_dir)))
        return
    document = client.result_document(job_id)
    if as_json:
        print(json.dumps(document))
    else:
        out.print(document.get("markdown") or document.get("text", ""))


@app.command()
def overlay(
    job_id: str,
    page: Annotated[int, typer.Option("--page", "-p", min=1)] = 1,
    out_path: Annotated[Path | None, typer.Option("--out")] = None,
    endpoint_url: EndpointOption = None,
    stack_name: StackOption = names.STACK_NAME,
    region: RegionOption = None,
) -> None:
    """Write a PNG of a page with the recognized boxes and text drawn on it."""
    from idp.overlay import render_overlay

    client = client_for(endpoint_url, stack_name, region)
    record = client.job(job_id)
    if record is None:
        err.print(f"[red]no job {job_id}[/]")
        raise typer.Exit(code=2)
    image = render_overlay(
        client.input_bytes(record),
        client.result_document(job_id),
        page,
        options=JobOptions.model_validate(record.get("options") or {}),
    )
    target = out_path or Path(f"{job_id}-page{page}.png")
    image.save(target)
    out.print(str(target))


# -- model cache ---------------------------------------------------------------------------------
@models_app.command("import-dir")
def models_import_dir(
    model_name: str,
    path: Annotated[Path, typer.Argument(exists=True, file_okay=False)],
    bucket: Annotated[str, typer.Option(help="model-cache bucket")],
    endpoint_url: EndpointOption = None,
    region: RegionOption = None,
) -> None:
    """Upload a local model directory into the model-cache bucket."""
    from idp.ocr.model_cache import ModelCache, archive_key

    s3 = aws_endpoint(endpoint_url, region).client("s3")
    digest = ModelCache(s3=s3, bucket=bucket).import_dir(model_name, path)
    out.print(f"{model_name} → s3://{bucket}/{archive_key(model_name)} (sha256 {digest})")


@models_app.command("sync")
def models_sync(
    bucket: Annotated[str, typer.Option(help="model-cache bucket")],
    model_names: Annotated[
        list[str] | None, typer.Option("--model", help="model names (default: all)")
    ] = None,
    endpoint_url: EndpointOption = None,
    region: RegionOption = None,
) -> None:
    """On a connected machine: download the official models and import them into the cache."""
    from idp.ocr.model_cache import DEFAULT_SYNC_MODELS, ModelCache, sync

    s3 = aws_endpoint(endpoint_url, region).client("s3")
    imported = sync(ModelCache(s3=s3, bucket=bucket), model_names or list(DEFAULT_SYNC_MODELS))
    for model_name, digest in imported.items():
        out.print(f"{model_name}: sha256 {digest}")


if __name__ == "__main__":
    app()
