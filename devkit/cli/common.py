"""What every `idp` command shares: consoles, option types, and how to reach the AWS it targets."""

from __future__ import annotations

import functools
import inspect
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Final

import boto3
import typer
from botocore.exceptions import BotoCoreError, ClientError
from rich import box
from rich.console import Console
from rich.table import Table

from devkit.client import JobProgress, PipelineClient, PipelineNames
from devkit.local.emulator import AwsEndpoint
from idp.contract import names
from idp.contract.job_record import JobRecord
from idp.contract.languages import default_text_model
from idp.contract.names import JobStatus, OcrModel, TextLayerMode

err = Console(stderr=True)
out = Console()

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

# Exit codes: 1 = the checked thing is not healthy; 2 = the command cannot even check it.
EXIT_UNHEALTHY = 1
EXIT_USAGE = 2


def job_model(name: str | None, lang: str) -> OcrModel:
    """The model a user named (through its aliases), or the default text-line model for `lang`."""
    return default_text_model(lang) if name is None else parse_model(name)


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


def with_stack_target(command: Callable[..., None]) -> Callable[..., None]:
    """A command that takes `stack: StackTarget` gets the options --endpoint-url, --stack-name
    and --region in its place.

    Typer reads one option per parameter of the command's signature: this signature names the
    three options where `stack` stands, and the command is called with the StackTarget they make.
    """
    signature = inspect.signature(command, eval_str=True)
    parameters: list[inspect.Parameter] = []
    for parameter in signature.parameters.values():
        if parameter.name == "stack":
            parameters.extend(
                option.replace(kind=parameter.kind) for option in _STACK_TARGET_OPTIONS
            )
        else:
            parameters.append(parameter)

    @functools.wraps(command)
    def run(
        *args: Any, endpoint_url: str | None, stack_name: str, region: str | None, **kwargs: Any
    ) -> None:
        command(*args, stack=StackTarget(endpoint_url, stack_name, region), **kwargs)

    run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return run


def resolve_names(endpoint: AwsEndpoint, stack_name: str) -> PipelineNames:
    """pipeline_names, with a clear message and exit 2 when the stack cannot be read."""
    try:
        return pipeline_names(endpoint, stack_name)
    except (ClientError, BotoCoreError, LookupError) as exc:
        where = endpoint.url or f"stack {stack_name} in {endpoint.region}"
        err.print(f"[red]cannot read the pipeline's resource names from {where}:[/] {exc}")
        raise typer.Exit(code=EXIT_USAGE) from None


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
    return {"COMPLETED": "green", "FAILED": "red", "PROCESSING": "yellow"}.get(status, "cyan")


def _error_text(record: JobRecord | None) -> str:
    error = record.get("error") if record else None
    return f"{error['code']}: {error['message']}" if error else ""


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
        job = str(record.get("job_id", ""))[:12]
        table.add_row(
            job,
            f"[{status_style(status)}]{status}[/]",
            str(record.get("model", "")),
            str(record.get("lang", "")),
            _pages_cell(record),
            review_cell(record),
            str(record.get("input_key", "")).rsplit("/", 1)[-1][:24],
            f"{total:.0f}" if isinstance(total, int | float) else "",
        )
        if record.get("error"):
            errors.append(f"{job}: {_error_text(record)}")
    if errors:
        table.caption = "\n".join(errors)
    return table


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


def _pages_cell(record: JobRecord) -> str:
    if JobStatus(str(record.get("status", "QUEUED"))).is_terminal or "pages_total" not in record:
        return str(record.get("page_count", ""))
    return JobProgress.of(record).describe()
