"""`idp smoke`: one small generated document per model through a running pipeline, checked.

Each model gets its own page of known text (with a run number, so the content-hash result cache
cannot answer instead of the engine). The job goes in through the job queue like any other, and
passes when it COMPLETED in time and its recognized text resembles what was drawn.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from botocore.exceptions import BotoCoreError, ClientError
from rich import box
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from devkit.cli.common import (
    JsonOption,
    LangOption,
    StackTarget,
    err,
    first_line,
    out,
    parse_model,
    pipeline_client,
    pipeline_names,
    status_style,
    with_stack_target,
)
from devkit.cli.errors import ExitCode
from devkit.client import PipelineClient, PipelineNames
from devkit.synthetic import encode, render_page, sample_lines
from devkit.textmetrics import character_error_rate
from idp.contract.job_record import ErrorRecord, JobRecord
from idp.contract.languages import DEFAULT_LANGUAGE
from idp.contract.names import JobStatus, OcrModel

TIMEOUT = "TIMEOUT"  # not a job status: the job was not terminal when the smoke stopped waiting
DEFAULT_MAX_CER = 0.2


@dataclass(frozen=True)
class SmokePage:
    """A page of known text for one model."""

    model: OcrModel
    lines: list[str]
    png: bytes

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def smoke_page(model: OcrModel, run_number: int) -> SmokePage:
    lines = [
        *sample_lines(2, offset=list(OcrModel).index(model) * 2),
        f"Smoke check {run_number} for {model.value}",
    ]
    image = render_page(lines, size=(1400, 80 + 66 * len(lines)), font_size=34, margin=40)
    return SmokePage(model=model, lines=lines, png=encode(image, "PNG"))


@dataclass
class SmokeOutcome:
    model: OcrModel
    job_id: str
    status: str  # a JobStatus value, or TIMEOUT
    seconds: float | None = None
    cer: float | None = None
    text: str = ""
    error: ErrorRecord | None = None
    engine: str | None = None
    substitute: bool = False
    max_cer: float = DEFAULT_MAX_CER

    @property
    def text_matches(self) -> bool:
        return self.cer is not None and self.cer <= self.max_cer

    @property
    def ok(self) -> bool:
        return self.status == JobStatus.COMPLETED and self.text_matches

    @property
    def problem(self) -> str | None:
        if self.ok:
            return None
        if self.status == TIMEOUT:
            return "TIMEOUT: the job was not finished when the smoke stopped waiting"
        if self.error:
            return f"{self.error.get('code')}: {self.error.get('message')}"
        if self.status == JobStatus.COMPLETED:
            return (
                f"TEXT_MISMATCH: character error rate {_percent(self.cer)} is over "
                f"{_percent(self.max_cer)}; read {first_line(self.text)!r}"
            )
        return f"{self.status}: no error recorded"

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model.value,
            "job_id": self.job_id,
            "status": self.status,
            "ok": self.ok,
            "seconds": None if self.seconds is None else round(self.seconds, 2),
            "cer": None if self.cer is None else round(self.cer, 4),
            "first_line": first_line(self.text),
            "error": self.error,
            "problem": self.problem,
            "engine": self.engine,
            "substitute": self.substitute,
        }


def default_models(pipeline: PipelineNames) -> list[OcrModel]:
    """PP-OCRv5, PP-OCRv6 and PP-StructureV3 always (their weights, or PP-StructureV3's
    layout substitute, are in every model cache the offline weights seed); PaddleOCR-VL when the
    stack has its endpoint."""
    models = [OcrModel.PP_OCRV5, OcrModel.PP_OCRV6, OcrModel.PP_STRUCTUREV3]
    if pipeline.vl_endpoint is not None:
        models.append(OcrModel.PADDLEOCR_VL)
    return models


def run_smoke(
    client: PipelineClient,
    models: list[OcrModel],
    *,
    lang: str,
    timeout_s: float,
    max_cer: float,
    work_dir: Path,
) -> list[SmokeOutcome]:
    """Submit one page per model, wait for all of them together, and check each result."""
    run_number = random.SystemRandom().randrange(10_000_000, 100_000_000)
    pages = {model: smoke_page(model, run_number) for model in models}
    outcomes: dict[str, SmokeOutcome] = {}
    started: dict[str, float] = {}
    for model, page in pages.items():
        path = work_dir / f"smoke-{model.value}.png"
        path.write_bytes(page.png)
        submitted = client.submit(path, model=model, lang=lang)
        started[submitted.job_id] = time.monotonic()
        outcomes[submitted.job_id] = SmokeOutcome(
            model=model, job_id=submitted.job_id, status=TIMEOUT, max_cer=max_cer
        )

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as progress:
        task = progress.add_task(f"smoke: waiting for {len(outcomes)} job(s)", total=None)

        def on_change(job_id: str, record: JobRecord) -> None:
            status = str(record.get("status"))
            outcome = outcomes[job_id]
            if JobStatus(status).is_terminal:
                outcome.seconds = time.monotonic() - started[job_id]
            progress.console.print(
                f"  {outcome.model.value}: [{status_style(status)}]{status}[/]",
                highlight=False,
            )
            progress.update(task)

        records = client.wait(list(outcomes), timeout_s=timeout_s, on_change=on_change)

    for job_id, outcome in outcomes.items():
        record = records.get(job_id)
        if record is None or not JobStatus(record["status"]).is_terminal:
            continue
        outcome.status = str(record["status"])
        outcome.error = record.get("error")
        if outcome.status == JobStatus.COMPLETED:
            try:
                document = client.result_document(job_id)
            except (LookupError, ClientError) as exc:
                outcome.error = {"code": "RESULT_UNREADABLE", "message": str(exc)}
                continue
            outcome.text = str(document.get("text", ""))
            engine = document.get("engine") or {}
            outcome.engine = engine.get("name")
            outcome.substitute = bool(engine.get("substitute"))
            outcome.cer = character_error_rate(pages[outcome.model].text, outcome.text)
    return list(outcomes.values())


def _percent(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f} %"


def smoke_table(outcomes: list[SmokeOutcome], title: str) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("model", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("seconds", justify="right", no_wrap=True)
    table.add_column("CER", justify="right", no_wrap=True)
    table.add_column("check", no_wrap=True)
    table.add_column("first line of text / error", overflow="fold")
    notes = []
    for outcome in outcomes:
        model = outcome.model.value
        if outcome.substitute:
            model += " *"
            notes.append(f"* served by the substitute engine ({outcome.engine}), not the model")
        table.add_row(
            model,
            f"[{status_style(outcome.status)}]{outcome.status}[/]",
            "" if outcome.seconds is None else f"{outcome.seconds:.1f}",
            _percent(outcome.cer),
            "[green]pass[/]" if outcome.ok else "[red]FAIL[/]",
            first_line(outcome.text) if outcome.ok else str(outcome.problem),
        )
    if notes:
        table.caption = "\n".join(sorted(set(notes)))
        table.caption_justify = "left"
    return table


@with_stack_target
def smoke(
    model_names: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            help="model to check (repeatable). Default: PP-OCRv5, PP-OCRv6 and PP-StructureV3, "
            "plus PaddleOCR-VL when the stack has the VL endpoint",
        ),
    ] = None,
    lang: LangOption = DEFAULT_LANGUAGE,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=0,
            help="seconds to wait for all jobs together; a PaddleOCR-VL job on an endpoint at "
            "0 instances waits for an instance to start (minutes on AWS: `idp endpoint up` "
            "first makes it quick)",
        ),
    ] = 1800.0,
    max_cer: Annotated[
        float,
        typer.Option(
            "--max-cer",
            min=0,
            max=1,
            help="highest character error rate against the drawn text that still passes",
        ),
    ] = DEFAULT_MAX_CER,
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """Prove a running pipeline works: OCR a generated page per model and check the text.

    Exits 0 only if every job COMPLETED within --timeout with text resembling the page.
    """
    endpoint = stack.endpoint
    pipeline = pipeline_names(endpoint, stack.stack_name)
    models = list(dict.fromkeys(parse_model(name) for name in model_names or []))
    models = models or default_models(pipeline)
    if OcrModel.PADDLEOCR_VL in models and pipeline.vl_endpoint is None:
        err.print(
            f"[red]PaddleOCR-VL is not deployed[/] in {endpoint.url or stack.stack_name} "
            "(no VL endpoint: vlEnabled=false)"
        )
        raise typer.Exit(code=ExitCode.USAGE)
    where = endpoint.url or f"{stack.stack_name} ({endpoint.region})"
    err.print(f"smoke: {', '.join(m.value for m in models)} against {where}")
    try:
        with tempfile.TemporaryDirectory(prefix="idp-smoke-") as work:
            outcomes = run_smoke(
                pipeline_client(endpoint, pipeline),
                models,
                lang=lang,
                timeout_s=timeout,
                max_cer=max_cer,
                work_dir=Path(work),
            )
    except (ClientError, BotoCoreError) as exc:
        err.print(f"[red]smoke could not run:[/] {exc}")
        raise typer.Exit(code=ExitCode.UNHEALTHY) from None
    if as_json:
        print(json.dumps([outcome.as_json() for outcome in outcomes]))
    else:
        out.print(smoke_table(outcomes, f"smoke: {where}"))
        passed = sum(outcome.ok for outcome in outcomes)
        verdict = "green" if passed == len(outcomes) else "red"
        out.print(f"[{verdict}]{passed}/{len(outcomes)} models passed[/]")
    if not all(outcome.ok for outcome in outcomes):
        raise typer.Exit(code=ExitCode.UNHEALTHY)
