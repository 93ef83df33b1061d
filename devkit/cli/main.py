"""`idp`: local runs on the embedded AWS, and jobs against a deployed stack or a local emulator."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Final

import typer
from rich.table import Table

from devkit.cli.common import (
    SHOWN_ID,
    JobIdArgument,
    JsonOption,
    LangOption,
    ModelOption,
    StackTarget,
    TextLayerOption,
    TextModelOption,
    check_job,
    err,
    jobs_table,
    out,
    pipeline_names,
    review_cell,
    wait_with_progress,
    with_stack_target,
)
from devkit.cli.dlq import dlq_app
from devkit.cli.endpoint import endpoint_app
from devkit.cli.errors import DEBUG_KEY, CliError, JobFailed, ReportingGroup
from devkit.cli.local import local_app
from devkit.cli.models import models_app
from devkit.cli.smoke import smoke
from devkit.cli.views import RESULT_HTML, open_viewer, write_views
from devkit.client import JobProgress, PipelineClient
from devkit.grants import producer_policy
from idp.contract.job_record import JobRecord
from idp.contract.jobs import JobOptions
from idp.contract.languages import DEFAULT_LANGUAGE
from idp.contract.names import JobStatus, TextLayerMode

app = typer.Typer(
    help="Serverless document OCR with PaddleOCR: local runs and job tools.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=ReportingGroup,
)
app.add_typer(local_app, name="local")
app.add_typer(models_app, name="models")
app.add_typer(endpoint_app, name="endpoint")
app.add_typer(dlq_app, name="dlq")
app.command()(smoke)


def _print_version(value: bool) -> None:
    if value:
        out.print(f"idp {version('paddle-idp')}")
        raise typer.Exit


@app.callback()
def idp(
    ctx: typer.Context,
    debug: Annotated[
        bool, typer.Option("--debug", help="show the traceback of any error, for a bug report")
    ] = False,
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="print the version and exit"
        ),
    ] = False,
) -> None:
    """Serverless document OCR with PaddleOCR: local runs and job tools."""
    ctx.meta[DEBUG_KEY] = debug


# -- jobs against a deployed stack or a local emulator ---------------------------------------------
@app.command()
@with_stack_target
def submit(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="the document to read")],
    model: ModelOption = None,
    lang: LangOption = DEFAULT_LANGUAGE,
    text_layer: TextLayerOption = TextLayerMode.AUTO,
    text_model: TextModelOption = None,
    wait: Annotated[
        float,
        typer.Option(help="wait this many seconds for the job to end (0: do not wait)", min=0),
    ] = 0.0,
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """Upload a document and queue its job; prints the job id (and, with --wait, its end)."""
    ocr_model = check_job(file, model, lang)
    client = stack.client()
    submitted = client.submit(
        file,
        model=ocr_model,
        lang=lang,
        options=JobOptions(text_layer=text_layer, text_model=text_model),
    )
    record = (
        wait_with_progress(client, [submitted.job_id], wait)[submitted.job_id] if wait else None
    )
    if as_json:
        shown = {"job_id": submitted.job_id, "key": submitted.key}
        print(json.dumps({**shown, "status": record.get("status")} if record else shown))
    else:
        out.print(submitted.job_id)
        if record:
            out.print(jobs_table([record], "job"))
    if wait:
        _require_completed(submitted.job_id, record)


def _require_completed(job_id: str, record: JobRecord | None) -> None:
    if record is None:
        raise JobFailed(f"job {job_id} was not recorded in time: `idp status {job_id[:SHOWN_ID]}`")
    if record["status"] == JobStatus.COMPLETED:
        return
    error = record.get("error")
    if error:
        raise JobFailed(f"job {job_id} failed: {error['code']}: {error['message']}")
    raise JobFailed(f"job {job_id} did not end in time (status {record['status']})")


@app.command()
@with_stack_target
def status(
    job_id: JobIdArgument,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="every field of the job's record")
    ] = False,
    wait: Annotated[
        float,
        typer.Option(help="wait this many seconds for the job to end, with its pages done", min=0),
    ] = 0.0,
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """Show one job: its status, pages, review, error, result files and times."""
    client = stack.client()
    record = client.require_job(job_id)
    if wait:
        record = wait_with_progress(client, [record["job_id"]], wait)[record["job_id"]] or record
    if as_json:
        print(json.dumps(record))
    else:
        out.print(_status_table(record, verbose=verbose))
    if wait:
        _require_completed(record["job_id"], record)


# What `idp status` shows, in this order (`--verbose`: every field of the record).
_STATUS_FIELDS: Final = (
    *("status", "model", "lang", "input_key", "page_count", "owner"),
    *("result_uri", "markdown_uri", "pdf_uri", "textract_uri"),
    *("created_at", "started_at", "finished_at", "updated_at"),
)


def _status_table(record: JobRecord, *, verbose: bool) -> Table:
    table = Table(title=f"job {record['job_id']}", show_header=False)
    table.add_column("field", no_wrap=True)
    table.add_column("value", overflow="fold")
    progress = JobProgress.of(record).describe()
    if progress and not JobStatus(record["status"]).is_terminal:
        table.add_row("[bold]progress[/]", f"{progress} pages")
    if "review_pages" in record:
        table.add_row("[bold]review[/]", review_cell(record))
    error = record.get("error")
    if error:
        table.add_row("[bold red]error[/]", f"{error['code']}: {error['message']}", style="red")
    total = (record.get("timings_ms") or {}).get("total")
    if isinstance(total, int | float):
        table.add_row("ms", f"{total:.0f}")
    shown = record.keys() if verbose else [key for key in _STATUS_FIELDS if key in record]
    for key in shown:
        if key == "error":  # shown above, whole
            continue
        value = record[key]  # type: ignore[literal-required]
        table.add_row(key, json.dumps(value) if isinstance(value, dict | list) else str(value))
    return table


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
@with_stack_target
def jobs(
    status_filter: Annotated[
        JobStatus | None,
        typer.Option("--status", case_sensitive=False, help="only the jobs in this status"),
    ] = None,
    since: Annotated[str | None, typer.Option(help="ISO time or 30m / 2h / 7d")] = None,
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """List jobs, newest first."""
    records = stack.client().jobs(status=status_filter, since=_since(since))
    if as_json:
        print(json.dumps(records))
    else:
        out.print(jobs_table(records, f"{len(records)} job{'' if len(records) == 1 else 's'}"))


@app.command()
@with_stack_target
def result(
    job_id: JobIdArgument,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="save the result files and result.html here")
    ] = None,
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """Print a job's recognized text (Markdown for a layout model), or save its files (--out)."""
    client = stack.client()
    if out_dir is not None:
        saved = _download(client, job_id, out_dir)
        if as_json:
            print(json.dumps({key: str(path) for key, path in saved.items()}))
        else:
            for path in saved.values():
                out.print(str(path), highlight=False, soft_wrap=True)
        return
    document = client.result_document(job_id)
    if as_json:
        print(json.dumps(document))
    else:
        out.print(document.get("markdown") or document.get("text", ""), markup=False)


@app.command()
@with_stack_target
def grant(
    principal_id: Annotated[
        str,
        typer.Argument(
            help="the producer's principal id: a role's AROA… (all its sessions), "
            "AROA…:session, or a user's AIDA…",
        ),
    ],
    input_prefix: Annotated[
        list[str] | None,
        typer.Option("--input-prefix", help="an input-bucket prefix it may upload under"),
    ] = None,
    *,
    stack: StackTarget,
) -> None:
    """Print the IAM policy that gives one producer its own slice: send jobs, upload under its
    prefixes, read its own results and no one else's."""
    endpoint = stack.endpoint
    pipeline = pipeline_names(endpoint, stack.stack_name)
    try:
        policy = producer_policy(
            principal_id, pipeline, region=endpoint.region, input_prefixes=input_prefix or ()
        )
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="PRINCIPAL_ID") from None
    print(json.dumps(policy, indent=2))


@app.command()
@with_stack_target
def delete(
    job_id: JobIdArgument,
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """Delete an ended job's results, its result-cache entry and its record; the input stays."""
    deleted = stack.client().delete_job(job_id)
    if as_json:
        print(json.dumps({"deleted": deleted}))
    else:
        for uri in deleted:
            out.print(uri, highlight=False, soft_wrap=True)
        err.print(f"deleted {len(deleted)} objects and the job's record")


@app.command()
@with_stack_target
def view(
    job_id: JobIdArgument,
    out_dir: Annotated[
        Path, typer.Option("--out", help="where the result files and result.html are saved")
    ] = Path("idp-results"),
    open_browser: Annotated[
        bool, typer.Option("--open/--no-open", help="open result.html in a browser")
    ] = True,
    *,
    stack: StackTarget,
) -> None:
    """Save a job's result and open result.html: its pages, blocks, tables and verdicts."""
    saved = _download(stack.client(), job_id, out_dir)
    viewer = saved[RESULT_HTML]
    out.print(str(viewer), highlight=False, soft_wrap=True)
    if open_browser:
        open_viewer(viewer)


def _download(client: PipelineClient, job_id: str, out_dir: Path) -> dict[str, Path]:
    """The job's result files under out_dir/<job id>/ by name, result.html among them."""
    record = client.require_job(job_id)
    result_path = client.download_result(record["job_id"], out_dir)
    views = write_views(client, record, result_path)
    if views.get("viewer_error"):
        raise CliError(f"result saved in {result_path.parent}; {views['viewer_error']}")
    return {path.name: path for path in sorted(result_path.parent.iterdir()) if path.is_file()}


@app.command()
@with_stack_target
def overlay(
    job_id: JobIdArgument,
    page: Annotated[int, typer.Option("--page", "-p", min=1, help="the page to draw")] = 1,
    out_path: Annotated[
        Path | None, typer.Option("--out", help="the PNG to write; default: JOB-pageN.png")
    ] = None,
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """Write a PNG of a page with the recognized boxes and text drawn on it."""
    from devkit.overlay import render_overlay

    client = stack.client()
    record = client.require_job(job_id)
    job_id = record["job_id"]
    image = render_overlay(
        client.input_bytes(record),
        client.result_document(job_id),
        page,
        options=JobOptions.model_validate(record.get("options") or {}),
    )
    target = out_path or Path(f"{job_id}-page{page}.png")
    image.save(target)
    if as_json:
        print(json.dumps({"job_id": job_id, "page": page, "overlay": str(target)}))
    else:
        out.print(str(target))


if __name__ == "__main__":
    app()
