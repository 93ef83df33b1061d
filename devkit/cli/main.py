"""`idp`: local runs on the embedded AWS, and jobs against a deployed stack or a local emulator."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from devkit.cli.common import (
    JsonOption,
    LangOption,
    ModelOption,
    StackTarget,
    TextLayerOption,
    err,
    job_model,
    jobs_table,
    out,
    review_cell,
    with_stack_target,
)
from devkit.cli.dlq import dlq_app
from devkit.cli.endpoint import endpoint_app
from devkit.cli.local import local_app
from devkit.cli.models import models_app
from devkit.cli.smoke import smoke
from devkit.client import JobProgress
from idp.contract.jobs import JobOptions
from idp.contract.languages import DEFAULT_LANGUAGE
from idp.contract.names import JobStatus, TextLayerMode

app = typer.Typer(
    help="Serverless document OCR with PaddleOCR: local runs and job tools.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(local_app, name="local")
app.add_typer(models_app, name="models")
app.add_typer(endpoint_app, name="endpoint")
app.add_typer(dlq_app, name="dlq")
app.command()(smoke)


# -- jobs against a deployed stack or a local emulator ---------------------------------------------
@app.command()
@with_stack_target
def submit(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False)],
    model: ModelOption = None,
    lang: LangOption = DEFAULT_LANGUAGE,
    text_layer: TextLayerOption = TextLayerMode.AUTO,
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """Upload a document and queue its job; prints the job id."""
    submitted = stack.client().submit(
        file, model=job_model(model, lang), lang=lang, options=JobOptions(text_layer=text_layer)
    )
    if as_json:
        print(json.dumps({"job_id": submitted.job_id, "key": submitted.key}))
    else:
        out.print(submitted.job_id)


@app.command()
@with_stack_target
def status(
    job_id: str,
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """Show one job's record."""
    record = stack.client().job(job_id)
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
    if "review_pages" in record:
        table.add_row("[bold]review[/]", review_cell(record))
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
@with_stack_target
def jobs(
    status_filter: Annotated[
        JobStatus | None, typer.Option("--status", case_sensitive=False)
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
        out.print(jobs_table(records, f"{len(records)} jobs"))


@app.command()
@with_stack_target
def result(
    job_id: str,
    out_dir: Annotated[Path | None, typer.Option("--out", help="save files here")] = None,
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """Print a job's recognized text (or save result.json, result.md, result.pdf with --out)."""
    client = stack.client()
    if out_dir is not None:
        out.print(str(client.download_result(job_id, out_dir)))
        return
    document = client.result_document(job_id)
    if as_json:
        print(json.dumps(document))
    else:
        out.print(document.get("markdown") or document.get("text", ""))


@app.command()
@with_stack_target
def overlay(
    job_id: str,
    page: Annotated[int, typer.Option("--page", "-p", min=1)] = 1,
    out_path: Annotated[Path | None, typer.Option("--out")] = None,
    *,
    stack: StackTarget,
) -> None:
    """Write a PNG of a page with the recognized boxes and text drawn on it."""
    from devkit.overlay import render_overlay

    client = stack.client()
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


if __name__ == "__main__":
    app()
