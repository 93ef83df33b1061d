"""How `idp` ends on a user's mistake or an environment problem: one line and an exit code.

Bugs still raise; `idp --debug …` shows the traceback of any error. The table of codes is in
docs/getting-started.md, "Job ids, output and errors".
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import typer
from botocore.exceptions import (
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ReadTimeoutError,
    TokenRetrievalError,
)
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from devkit.client import (
    AmbiguousJobId,
    JobNotFound,
    JobStillRunning,
    NoResult,
    NoSuchPage,
    PipelineNotFound,
)
from idp.contract.names import JobStatus

_stderr = Console(stderr=True)


class ExitCode(IntEnum):
    OK = 0
    UNHEALTHY = 1  # the checked thing answered, and it is not healthy (smoke, endpoint status)
    USAGE = 2  # the command line asks for something that cannot be (click's own code too)
    NOT_FOUND = 3  # no such job, stack, page or result
    AWS_ACCESS = 4  # no credentials, access denied, or the endpoint cannot be reached
    JOB_FAILED = 5  # the job ran and ended FAILED (or did not end in time)


class CliError(Exception):
    """A mistake or an environment problem the user can act on: its message is one line."""

    code = ExitCode.USAGE


class NotFound(CliError, LookupError):
    code = ExitCode.NOT_FOUND


class JobFailed(CliError):
    code = ExitCode.JOB_FAILED


# AWS error codes that say the caller may not do this, rather than that something is missing.
_ACCESS_CODES = frozenset(
    {
        "AccessDenied",
        "AccessDeniedException",
        "ExpiredToken",
        "ExpiredTokenException",
        "InvalidAccessKeyId",
        "InvalidClientTokenId",
        "SignatureDoesNotMatch",
        "UnrecognizedClientException",
    }
)
_MISSING_CODES = frozenset({"NoSuchBucket", "NoSuchKey", "ResourceNotFoundException", "404"})


# The client's own errors, and what each means to a user.
_CLIENT_CODES: tuple[tuple[type[Exception], ExitCode], ...] = (
    (AmbiguousJobId, ExitCode.USAGE),
    (JobStillRunning, ExitCode.USAGE),
    (JobNotFound, ExitCode.NOT_FOUND),
    (PipelineNotFound, ExitCode.NOT_FOUND),
    (NoSuchPage, ExitCode.NOT_FOUND),
)


def explain(exc: BaseException) -> tuple[ExitCode, str] | None:
    """The exit code and the one line for an error a user can act on; None for a bug."""
    if isinstance(exc, CliError):
        return exc.code, str(exc)
    if isinstance(exc, NoResult):
        failed = exc.record.get("status") == JobStatus.FAILED
        return ExitCode.JOB_FAILED if failed else ExitCode.NOT_FOUND, str(exc)
    for kind, code in _CLIENT_CODES:
        if isinstance(exc, kind):
            return code, str(exc)
    if isinstance(exc, ClientError):
        return _explain_refusal(exc)
    return _explain_access(exc)


def _explain_access(exc: BaseException) -> tuple[ExitCode, str] | None:
    """Credentials, region and network: the problems before AWS answers at all."""
    if isinstance(exc, NoCredentialsError | PartialCredentialsError | TokenRetrievalError):
        return ExitCode.AWS_ACCESS, (
            f"no AWS credentials ({exc}): set AWS_PROFILE or AWS_ACCESS_KEY_ID, "
            "or pass --endpoint-url for a local emulator"
        )
    if isinstance(exc, NoRegionError):
        return ExitCode.AWS_ACCESS, "no AWS region: pass --region or set AWS_REGION"
    if isinstance(exc, EndpointConnectionError | ConnectTimeoutError | ReadTimeoutError):
        where = exc.kwargs.get("endpoint_url") or "AWS"
        return ExitCode.AWS_ACCESS, (
            f"cannot reach {where}: is the URL right, and is `idp local up` (or the network) up?"
        )
    return None


def _explain_refusal(exc: ClientError) -> tuple[ExitCode, str]:
    """An AWS answer that refuses the call: access, or a missing resource."""
    error = exc.response.get("Error", {})
    code, message = str(error.get("Code", "")), str(error.get("Message", exc))
    if code in _ACCESS_CODES:
        return ExitCode.AWS_ACCESS, f"AWS denied {exc.operation_name} ({code}): {message}"
    if code in _MISSING_CODES or "does not exist" in message:
        return ExitCode.NOT_FOUND, f"{exc.operation_name}: {message}"
    return ExitCode.AWS_ACCESS, f"AWS refused {exc.operation_name} ({code}): {message}"


DEBUG_KEY = "idp.debug"  # ctx.meta: set by `idp --debug`


class ReportingGroup(TyperGroup):
    """The `idp` group: a known error in any command becomes one line on stderr and its exit
    code; with `--debug` (or an unknown error) the traceback shows."""

    def invoke(self, ctx: Any) -> Any:  # click's Context, which typer vendors privately
        try:
            return super().invoke(ctx)
        except Exception as exc:  # click's own (usage, exit) are no known error: they pass
            explained = explain(exc)
            if explained is None or ctx.meta.get(DEBUG_KEY):
                raise
            code, line = explained
            _stderr.print(f"[red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)
            raise typer.Exit(code=int(code)) from None
