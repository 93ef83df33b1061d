"""What every `idp` command shares: consoles, option types, and how to reach the AWS it targets."""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final

import boto3
import typer
from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from devkit.cli.errors import CliError
from devkit.client import JobProgress, PipelineClient, PipelineNames
from devkit.local.emulator import AwsEndpoint
from idp.contract import names
from idp.contract.errors import InputTooLarge, JobError, TooManyPages
from idp.contract.job_record import JobRecord
from idp.contract.jobs import validate_language
from idp.contract.languages import default_text_model
from idp.contract.names import JobStatus, MediaType, OcrModel, TextLayerMode

err = Console(stderr=True)
# On a terminal, tables fit its width; piped or redirected, they keep every value whole (a
# console's default there is 80 columns, which would cut them).
PIPED_WIDTH: Final = 1000
out = Console() if sys.stdout.isatty() else Console(width=PIPED_WIDTH)

ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="PP-OCRv5, PP-OCRv6, PP-StructureV3 or PaddleOCR-VL; default: PP-OCRv6, or "
        "PP-OCRv5 for a language PP-OCRv6 does not read (e.g. ru, korean, ar, hi)",
    ),
]
LangOption = Annotated[str, typer.Option("--lang", "-l", help="PaddleOCR language code")]
TextLayerOption = Annotated[
    TextLayerMode,
    typer.Option(
        "--text-layer",
        case_sensitive=False,
        help="PDF pages: auto = read a page's own text layer when it covers the page, else "
        "OCR; ocr = always OCR; only = never OCR (a page without a text layer fails the job)",
    ),
]
TextModelOption = Annotated[
    str | None,
    typer.Option(
        "--text-model",
        help="PP-StructureV3: the text-line model that reads its regions (PP-OCRv5 or "
        "PP-OCRv6; default: the stack's)",
    ),
]
JobIdArgument = Annotated[
    str, typer.Argument(help="a job id, or 8 or more of its first characters", metavar="JOB")
]
JsonOption = Annotated[bool, typer.Option("--json", help="machine-readable output on stdout")]
EndpointOption = Annotated[
    str | None,
    typer.Option(
        "--endpoint-url",
        envvar="IDP_ENDPOINT_URL",
        help="a local emulator's URL (from `idp local up`)",
    ),
]
StackOption = Annotated[
    str, typer.Option("--stack-name", help="deployed stack whose outputs name the resources")
]
RegionOption = Annotated[str | None, typer.Option("--region", help="AWS region")]


def job_model(name: str | None, lang: str) -> OcrModel:
    """The model a user named (through its aliases), or the default text-line model for `lang`."""
    return default_text_model(lang) if name is None else parse_model(name)


def check_job(file: Path, model: str | None, lang: str) -> OcrModel:
    """The model a job of `file` runs, once its model and language are known and its type is
    one the pipeline reads (check_input; a deployed stack's limits are its own); CliError
    naming the problem if not."""
    ocr_model = job_model(model, validate_lang(lang))
    try:
        check_input(file, ocr_model, max_input_bytes=None, max_pages=None)
    except JobError as exc:
        raise CliError(f"{file}: {exc}") from None
    return ocr_model


def check_input(
    file: Path, model: OcrModel, *, max_input_bytes: int | None, max_pages: int | None
) -> None:
    """What the pipeline would reject `file` for, found before anything starts: its type (by
    content), and its size and pages against the limits given. Raises the job's JobError."""
    from idp.document.media_types import detect_media_type

    size = file.stat().st_size
    if max_input_bytes is not None and size > max_input_bytes:
        raise InputTooLarge(f"{size:,} bytes is over the limit of {max_input_bytes:,}")
    media_type = detect_media_type(file.read_bytes())
    if max_pages is not None and media_type is MediaType.PDF:
        pages = _pdf_page_count(file)
        limit = names.VL_MAX_PAGES if model is OcrModel.PADDLEOCR_VL else max_pages
        if pages is not None and pages > limit:
            raise TooManyPages(f"{pages} pages is over {model.value}'s limit of {limit}")


def validate_lang(lang: str) -> str:
    try:
        return validate_language(lang)
    except JobError as exc:
        raise CliError(str(exc)) from None


def _pdf_page_count(file: Path) -> int | None:
    """The PDF's page count; None where it cannot be read here (the pipeline then says why)."""
    try:
        import pypdfium2  # type: ignore[import-untyped]
    except ImportError:  # the `cli` extra alone: the pipeline checks
        return None
    try:
        with contextlib.closing(pypdfium2.PdfDocument(file)) as pdf:
            return len(pdf)
    except pypdfium2.PdfiumError:
        return None


def parse_model(name: str) -> OcrModel:
    try:
        return OcrModel.parse(name)
    except KeyError:
        known = ", ".join(m.value for m in OcrModel)
        raise typer.BadParameter(f"unknown model {name!r}; use one of: {known}") from None


def configure_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def aws_endpoint(endpoint_url: str | None, region: str | None) -> AwsEndpoint:
    return AwsEndpoint(
        url=endpoint_url,
        region=region
        or os.environ.get("AWS_REGION")
        or os.environ.get("AWS_DEFAULT_REGION")
        or "us-east-1",
    )


def pipeline_names(endpoint: AwsEndpoint, stack_name: str) -> PipelineNames:
    """Names of a local emulator's resources (--endpoint-url) or a deployed stack's outputs."""
    if endpoint.url:
        from devkit.local.resources import pipeline_names as local_pipeline_names

        return local_pipeline_names(endpoint)
    return PipelineNames.from_stack(endpoint.client("cloudformation"), stack_name)


def pipeline_client(endpoint: AwsEndpoint, pipeline: PipelineNames) -> PipelineClient:
    return PipelineClient(
        s3=endpoint.client("s3"),
        sqs=endpoint.client("sqs"),
        table=endpoint.resource("dynamodb").Table(pipeline.jobs_table),
        pipeline=pipeline,
    )


@dataclass(frozen=True)
class StackTarget:
    """The pipeline a command works on: a local emulator (--endpoint-url) or a deployed stack
    (--stack-name, found in --region)."""

    endpoint_url: str | None
    stack_name: str
    region: str | None

    @property
    def endpoint(self) -> AwsEndpoint:
        return aws_endpoint(self.endpoint_url, self.region)

    def client(self) -> PipelineClient:
        """A client for the emulator's resources or the stack's (its outputs)."""
        endpoint = self.endpoint
        return pipeline_client(endpoint, pipeline_names(endpoint, self.stack_name))


_STACK_TARGET_OPTIONS = (
    inspect.Parameter(
        "endpoint_url", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=EndpointOption
    ),
    inspect.Parameter(
        "stack_name",
        inspect.Parameter.KEYWORD_ONLY,
        default=names.STACK_NAME,
        annotation=StackOption,
    ),
    inspect.Parameter(
        "region", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=RegionOption
    ),
)


def with_options(
    name: str, options: tuple[inspect.Parameter, ...], build: Callable[..., Any]
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A command that takes the parameter `name` gets `options` in its place, and is called with
    `build(**their values)` as that parameter.

    Typer reads one option per parameter of the command's signature: this signature names the
    options where `name` stands.
    """

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command, eval_str=True)
        parameters: list[inspect.Parameter] = []
        for parameter in signature.parameters.values():
            if parameter.name == name:
                parameters.extend(option.replace(kind=parameter.kind) for option in options)
            else:
                parameters.append(parameter)

        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> None:
            values = {option.name: kwargs.pop(option.name) for option in options}
            command(*args, **{name: build(**values)}, **kwargs)

        run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        return run

    return decorate


# A command that takes `stack: StackTarget` gets --endpoint-url, --stack-name and --region.
with_stack_target = with_options("stack", _STACK_TARGET_OPTIONS, StackTarget)


class EndpointUrlSession(boto3.Session):
    """A boto3 session whose clients all go to one endpoint URL (a local emulator).

    For SDKs that take a boto3 session but no endpoint URL (sagemaker-core builds its clients
    with `session.client(service, region, config=...)`): every client made from this session
    goes to the emulator, without touching AWS_ENDPOINT_URL* in this process's environment.
    """

    def __init__(self, *, endpoint_url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.endpoint_url = endpoint_url

    def client(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("endpoint_url", self.endpoint_url)
        return super().client(*args, **kwargs)


def _drop_empty_data_capture_config(parsed: dict[str, Any], **_: Any) -> None:
    """moto answers DescribeEndpoint with `DataCaptureConfig: {}` where SageMaker leaves the
    field out; sagemaker-core's typed model rejects the empty object (its fields are required).
    """
    if parsed.get("DataCaptureConfig") == {}:
        del parsed["DataCaptureConfig"]


def boto3_session(endpoint: AwsEndpoint) -> boto3.Session:
    """A session for the emulator (its URL, its fake credentials) or the default AWS chain."""
    session: boto3.Session
    if endpoint.url:
        env = endpoint.process_env()
        session = EndpointUrlSession(
            endpoint_url=endpoint.url,
            region_name=endpoint.region,
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        )
    else:
        session = boto3.Session(region_name=endpoint.region)
    # Also when AWS_ENDPOINT_URL points the default chain at an emulator.
    session.events.register(
        "after-call.sagemaker.DescribeEndpoint", _drop_empty_data_capture_config
    )
    return session


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def status_style(status: str) -> str:
    colours = {"COMPLETED": "green", "FAILED": "red", "REJECTED": "red", "PROCESSING": "yellow"}
    return colours.get(status, "cyan")


def _error_text(record: JobRecord | None) -> str:
    error = record.get("error") if record else None
    return f"{error['code']}: {error['message']}" if error else ""


SHOWN_ID: Final = 12  # characters of a job id a table shows on a terminal


def jobs_table(records: list[JobRecord], title: str) -> Table:
    """Jobs as a table; errors follow as the table's caption so narrow terminals stay readable."""
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, caption_justify="left")
    for column in ("job", "status", "model", "lang", "pages", "review", "file", "ms"):
        table.add_column(column, no_wrap=True)
    # pages: done/total (and chunks) while a job runs, the page count once it has ended
    errors = []
    for record in records:
        status = str(record.get("status", "?"))
        timings = record.get("timings_ms") or {}
        total = timings.get("total")
        job_id = str(record.get("job_id", ""))
        job = job_id[:SHOWN_ID] if out.is_terminal else job_id  # a prefix `idp status` takes
        table.add_row(
            job,
            f"[{status_style(status)}]{status}[/]",
            str(record.get("model", "")),
            str(record.get("lang", "")),
            _pages_cell(record),
            review_cell(record),
            _file_cell(record),
            f"{total:.0f}" if isinstance(total, int | float) else "",
        )
        if record.get("error"):
            errors.append(f"{job}: {_error_text(record)}")
    if errors:
        table.caption = "\n".join(errors)
    return table


def _file_cell(record: JobRecord) -> str:
    name = str(record.get("input_key", "")).rsplit("/", 1)[-1]
    return name[:24] if out.is_terminal else name


_REVIEW_PAGES_SHOWN: Final = 5


def review_cell(record: JobRecord) -> str:
    """The pages a person should look at (the job's `review_pages`): "ok" when none, blank
    until the job has completed (or for jobs completed before verdicts were recorded)."""
    if "review_pages" not in record:
        return ""
    pages = record["review_pages"]
    if not pages:
        return "[green]ok[/]"
    shown = ", ".join(str(page) for page in pages[:_REVIEW_PAGES_SHOWN])
    more = len(pages) - _REVIEW_PAGES_SHOWN
    return f"[yellow]p. {shown}{f' +{more}' if more > 0 else ''}[/]"


_RUNNING: Final = frozenset(status.value for status in JobStatus if not status.is_terminal)


def _pages_cell(record: JobRecord) -> str:
    status = str(record.get("status", JobStatus.QUEUED))
    running = status in _RUNNING and "pages_total" in record
    if not running:
        return str(record.get("page_count", ""))
    return JobProgress.of(record).describe()


def wait_with_progress(
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
            shown = job_id[:SHOWN_ID]
            progress.console.print(f"  {shown} → [{status_style(status)}]{status}[/]")

        def on_poll(job_id: str, record: JobRecord) -> None:
            done = JobProgress.of(record)
            if done.pages_total is None or done.pages_total < 2:
                return
            if job_id not in page_tasks:
                page_tasks[job_id] = progress.add_task(
                    f"  {job_id[:SHOWN_ID]} pages", total=done.pages_total, unit="pages"
                )
            progress.update(page_tasks[job_id], completed=done.pages_done)

        return client.wait(job_ids, timeout_s=timeout, on_change=on_change, on_poll=on_poll)
