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
from rich.markdown import Markdown
from rich.table import Table

from devkit.cli.common import (
    JsonOption,
    LangOption,
    ModelOption,
    TextLayerOption,
    TextModelOption,
    check_input,
    configure_logging,
    err,
    job_model,
    jobs_table,
    out,
    validate_lang,
    wait_with_progress,
)
from devkit.cli.errors import ExitCode
from devkit.cli.views import RESULT_HTML, open_viewer, write_views
from idp.contract import names
from idp.contract.errors import JobError
from idp.contract.job_record import JobRecord
from idp.contract.jobs import JobOptions
from idp.contract.languages import DEFAULT_LANGUAGE, default_text_model
from idp.contract.names import JobStatus, OcrModel, TextLayerMode

if TYPE_CHECKING:
    from devkit.local.pipeline import LocalPipeline

REJECTED = "REJECTED"  # a file's row when the checks before the run turned it away

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
    open_viewer_: Annotated[
        bool, typer.Option("--open", help="open the first result.html in a browser")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="log the functions' own lines to stderr")
    ] = False,
) -> None:
    """Start the emulator, seed the model cache, run the documents, download results, stop.

    Files that the pipeline would turn away are reported before anything starts. Exits 0 if
    every job COMPLETED, 5 if one did not, 2 if no file could run.
    """
    configure_logging(verbose)
    ocr_model = job_model(model, validate_lang(lang))
    checked = [_rejected(path, ocr_model) for path in paths]
    accepted = [path for path, row in zip(paths, checked, strict=True) if row is None]
    ran = iter(
        _run_jobs(
            accepted,
            ocr_model,
            lang=lang,
            options=JobOptions(text_layer=text_layer, text_model=text_model),
            out_dir=out_dir,
            overlay_page=overlay_page,
            events_file=events_file,
            timeout=timeout,
            verbose=verbose,
            vl_substitute=vl_substitute,
            workers=workers,
            chunk_pages=chunk_pages,
        )
        if accepted
        else []
    )
    rows = [row if row is not None else next(ran) for row in checked]  # in the order given
    if as_json:
        public = (
            *("file", "job_id", "status", "error", "pages", "result"),
            *("viewer", "viewer_error", "overlay_error"),
        )
        print(json.dumps([{key: row.get(key) for key in public} for row in rows]))
    elif accepted:
        _print_rows(rows)
    viewers = [row["viewer"] for row in rows if row.get("viewer")]
    if open_viewer_ and viewers:
        open_viewer(Path(viewers[0]))
    if not accepted:  # nothing ran: a line per file turned away
        for row in rows:
            err.print(f"[red]error:[/] {row['file']}: {row['error']['message']}", soft_wrap=True)
        raise typer.Exit(code=ExitCode.USAGE)
    if not all(row["status"] == JobStatus.COMPLETED for row in rows):
        raise typer.Exit(code=ExitCode.JOB_FAILED)


def _rejected(path: Path, model: OcrModel) -> dict[str, Any] | None:
    """The row of a file the pipeline would reject (checked before anything starts), or None.

    The limits are the local runtime's, which are the stack's defaults (LocalSettings)."""
    try:
        check_input(
            path,
            model,
            max_input_bytes=names.DEFAULT_MAX_INPUT_BYTES,
            max_pages=names.DEFAULT_MAX_PAGES,
        )
    except JobError as exc:
        error = {"code": exc.code, "message": str(exc)}
        return {"file": str(path), "job_id": None, "status": REJECTED, "error": error}
    return None


def _run_jobs(
    paths: list[Path],
    model: OcrModel,
    *,
    lang: str,
    options: JobOptions,
    out_dir: Path,
    overlay_page: int,
    events_file: Path | None,
    timeout: float,
    verbose: bool,
    vl_substitute: bool,
    workers: int,
    chunk_pages: int,
) -> list[dict[str, Any]]:
    """Start the emulator, run the documents, download their results, stop; a row per file."""
    from devkit.local.pipeline import LocalPipeline
    from devkit.local.settings import LocalSettings

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
            submitted = [client.submit(p, model=model, lang=lang, options=options) for p in paths]
            records = wait_with_progress(client, [s.job_id for s in submitted], timeout)
            if events_file is not None:
                _write_events(pipeline, {s.job_id for s in submitted}, events_file)
            for item in submitted:
                record = records.get(item.job_id)
                row: dict[str, Any] = {
                    "file": str(item.file),
                    "job_id": item.job_id,
                    "status": record["status"] if record else "UNKNOWN",
                    "error": record.get("error") if record else None,
                    "pages": record.get("page_count") if record else None,
                    "record": record,
                }
                if record and record.get("status") == JobStatus.COMPLETED:
                    result_path = client.download_result(item.job_id, out_dir)
                    row["result"] = str(result_path)
                    row.update(write_views(client, record, result_path, overlay_page))
                rows.append(row)
    return rows


def _row_record(row: dict[str, Any]) -> JobRecord:
    """A row that has no job record (a file turned away, a job never recorded), as a record."""
    record = JobRecord(job_id=row["job_id"] or "-", status=row["status"], input_key=row["file"])
    if row.get("error"):
        record["error"] = row["error"]
    return record


def _print_rows(rows: list[dict[str, Any]]) -> None:
    shown = [row.get("record") or _row_record(row) for row in rows]
    out.print(jobs_table(shown, "jobs"))
    for row in rows:
        if row.get("result"):
            overlay = row.get("overlay")
            print_result_summary(row["file"], Path(row["result"]), overlay and Path(overlay))
        for view in ("viewer", "overlay"):
            if row.get(f"{view}_error"):
                out.print(f"[yellow]no {view} for {row['file']}[/]: {row[f'{view}_error']}")


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


def print_result_summary(file: str, result_path: Path, overlay_path: Path | None) -> None:
    """Page 1's text (a layout model's: the document's Markdown), pages to review, the files."""
    document = json.loads(result_path.read_text())
    pages = document.get("pages") or [{}]
    if document.get("markdown"):
        _heading(f"{file}: {len(pages)} pages as Markdown ({document['engine']['name']})")
        out.print(Markdown(document["markdown"]))
    else:
        text = "\n".join(line["text"] for line in pages[0].get("lines", []))
        _heading(f"{file}: page 1 of {len(pages)} ({document['engine']['name']})")
        out.print(text or "(no text recognized)", markup=False, highlight=False)
    for page in pages:
        quality = page.get("quality") or {}
        if quality.get("verdict") == "review":
            reasons = ", ".join(quality.get("reasons", []))
            out.print(f"[yellow]review page {page['page']}[/]: {reasons}")
    written = [result_path.parent / name for name in _RESULT_FILES]
    if overlay_path:
        written.append(overlay_path)
    for path in written:
        if path.is_file():
            out.print(f"  {path}", highlight=False, soft_wrap=True)


def _heading(title: str) -> None:
    if out.is_terminal:
        out.rule(title)
    else:
        out.print(f"== {title}", markup=False, highlight=False, soft_wrap=True)


# What a run downloads beside each other, in the order a person would open them.
_RESULT_FILES = (
    RESULT_HTML,
    names.RESULT_MD,
    names.RESULT_JSON,
    names.RESULT_PDF,
    names.RESULT_TEXTRACT,
)


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
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="log the functions' own lines to stderr")
    ] = False,
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
                _print_local_up(described, resources.input_bucket, vl_substitute=vl_substitute)
            try:
                while True:
                    time.sleep(1)
            except KeyboardInterrupt:
                err.print("stopping")


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _print_local_up(described: dict[str, Any], input_bucket: str, *, vl_substitute: bool) -> None:
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
    # Without the substitute, PaddleOCR-VL needs weights this machine does not have.
    smoke_models = "" if vl_substitute else " --model PP-OCRv6 --model PP-OCRv5 --model structure"
    out.print(
        "Try:\n"
        "  export AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local "
        "AWS_DEFAULT_REGION=us-east-1\n"
        f"  aws --endpoint-url {url} s3 cp FILE "
        f"s3://{input_bucket}/input/{default_text_model(DEFAULT_LANGUAGE).value}/FILE\n"
        f"  idp submit FILE --wait 300 --endpoint-url {url}\n"
        f"  idp jobs --endpoint-url {url}\n"
        f"  idp smoke --endpoint-url {url}{smoke_models}\n"
        f"  idp endpoint status --endpoint-url {url}\n"
        "Ctrl-C stops everything.",
        soft_wrap=True,
    )
