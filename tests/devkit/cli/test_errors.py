"""Every `idp` command ends a user's mistake or an environment problem in one line with its
exit code (docs/getting-started.md, "Job ids, output and errors"), never a traceback;
`--debug` shows the traceback."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import EndpointConnectionError
from typer.testing import CliRunner, Result

from devkit.cli.errors import ExitCode
from devkit.cli.main import app
from devkit.synthetic_pdf import born_digital_pdf, mixed_pages
from tests.devkit.cli.conftest import LocalUp

UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing listens there
# No credentials anywhere the default chain looks.
NO_CREDENTIALS: dict[str, str | None] = {
    "AWS_ACCESS_KEY_ID": None,
    "AWS_SECRET_ACCESS_KEY": None,
    "AWS_SESSION_TOKEN": None,
    "AWS_PROFILE": None,
    "AWS_ENDPOINT_URL": None,
    "IDP_ENDPOINT_URL": None,
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": None,
    "AWS_CONTAINER_CREDENTIALS_FULL_URI": None,
    "AWS_WEB_IDENTITY_TOKEN_FILE": None,
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials",
    "AWS_CONFIG_FILE": "/nonexistent/config",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_DEFAULT_REGION": "us-east-1",
}
SOME_JOB = "0123456789abcdef0123456789abcdef"


def _idp(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200", **(env or {})})


def assert_one_line(result: Result, code: ExitCode, *words: str) -> str:
    """The command exited `code` with one line on stderr (holding `words`) and no traceback."""
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("errors") / "one page.pdf"
    path.write_bytes(born_digital_pdf(mixed_pages()[:1]))
    return path


def _commands(pdf: Path, tmp: Path) -> list[tuple[str, ...]]:
    """Every command that talks to a pipeline, with arguments it would accept."""
    models = tmp / "model"  # a model directory by its files; nothing reads it before AWS
    models.mkdir(exist_ok=True)
    (models / "inference.yml").write_text("Global: {}\n")
    (models / "inference.onnx").write_bytes(b"")
    manifest = ("--manifest", str(tmp / "manifest.json"))  # never this checkout's pins
    return [
        ("jobs",),
        ("submit", str(pdf)),
        ("status", SOME_JOB),
        ("result", SOME_JOB),
        ("result", SOME_JOB, "--out", str(tmp)),
        ("overlay", SOME_JOB),
        ("smoke",),
        ("endpoint", "status"),
        ("endpoint", "up"),
        ("endpoint", "down"),
        ("dlq", "list"),
        ("dlq", "redrive"),
        ("models", "import-dir", "PP-OCRv5_mobile_det", str(models), "--bucket", "c", *manifest),
    ]


def test_every_command_without_aws_credentials_says_so_in_one_line(
    pdf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for command in _commands(pdf, tmp_path):
        # WHEN a command that needs AWS runs where there are no credentials (in a new process:
        # boto3's default session would keep what it found for an earlier test)
        monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
        result = _idp(*command, env=NO_CREDENTIALS)
        # THEN it exits 4 with one line naming what to set
        assert_one_line(result, ExitCode.AWS_ACCESS, "credentials")


def test_every_command_against_an_unreachable_endpoint_says_so_in_one_line(
    pdf: Path, tmp_path: Path
) -> None:
    for command in _commands(pdf, tmp_path):
        result = _idp(*command, "--endpoint-url", UNREACHABLE, env=NO_CREDENTIALS)
        assert_one_line(result, ExitCode.AWS_ACCESS, "cannot reach", UNREACHABLE)


def test_debug_shows_the_traceback(pdf: Path) -> None:
    # WHEN the same mistake runs with --debug
    result = _idp("--debug", "jobs", "--endpoint-url", UNREACHABLE, env=NO_CREDENTIALS)
    # THEN the error is raised, for its traceback
    assert isinstance(result.exception, EndpointConnectionError)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--model", "PP-OCRv9"), ("unknown model", "PP-OCRv9")),
        (("--lang", "klingon"), ("unknown language", "klingon")),
    ],
)
def test_a_bad_model_or_language_is_refused_before_aws_is_asked(
    pdf: Path, args: tuple[str, ...], words: tuple[str, ...]
) -> None:
    # No credentials: the command must not get as far as AWS.
    result = _idp("submit", str(pdf), *args, env=NO_CREDENTIALS)
    assert result.exit_code == ExitCode.USAGE, result.output
    assert "Traceback" not in result.output
    for word in words:
        assert word in result.output


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"meeting notes, not a document\n", ("plain text", "supported formats")),
        (b"", ("empty",)),
    ],
)
def test_a_file_that_is_no_document_is_refused_before_anything_starts(
    tmp_path: Path, content: bytes, words: tuple[str, ...]
) -> None:
    notes = tmp_path / "notes.pdf"  # the name says PDF; the content decides
    notes.write_bytes(content)

    submitted = _idp("submit", str(notes), env=NO_CREDENTIALS)
    assert_one_line(submitted, ExitCode.USAGE, str(notes), *words)

    # `idp local run` turns it away before the emulator starts
    ran = _idp("local", "run", str(notes), env=NO_CREDENTIALS)
    assert_one_line(ran, ExitCode.USAGE, str(notes), *words)
    assert "starting" not in ran.output


def test_local_run_refuses_an_unknown_language_before_the_emulator_starts(pdf: Path) -> None:
    result = _idp("local", "run", str(pdf), "--lang", "klingon")
    assert_one_line(result, ExitCode.USAGE, "klingon")
    assert "starting" not in result.output


def test_version_is_the_package_version() -> None:
    result = _idp("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"idp {version('paddle-idp')}"


# -- against a running pipeline ------------------------------------------------------------------
def _put_job(local_up: LocalUp, job_id: str, **fields: Any) -> None:
    """A job record as the pipeline writes it, straight into the emulator's table."""
    table = local_up.jobs_table()
    record = {
        "job_id": job_id,
        "status": "COMPLETED",
        "model": "PP-OCRv6",
        "lang": "en",
        "created_at": "2026-12-01T10:00:00.000Z",
    }
    table.put_item(Item={**record, **fields})


@pytest.mark.ocr
def test_unknown_jobs_and_short_prefixes_are_not_found(local_up: LocalUp) -> None:
    url = ("--endpoint-url", local_up.endpoint_url)
    for command in ("status", "result", "overlay"):
        assert_one_line(_idp(command, "nosuchjob0", *url), ExitCode.NOT_FOUND, "no job nosuchjob0")
        # a prefix shorter than 8 characters names no job, even when one starts with it
        assert_one_line(_idp(command, SOME_JOB[:6], *url), ExitCode.NOT_FOUND, "8 characters")


@pytest.mark.ocr
def test_a_prefix_names_a_job_and_an_ambiguous_one_lists_its_matches(local_up: LocalUp) -> None:
    first, second = "c0ffee11aa" + "0" * 22, "c0ffee11bb" + "0" * 22
    _put_job(local_up, first)
    _put_job(local_up, second)
    url = ("--endpoint-url", local_up.endpoint_url)

    # WHEN a prefix that both ids start with is asked for
    ambiguous = _idp("status", "c0ffee11", *url)
    # THEN the command lists both and asks for more characters
    assert_one_line(ambiguous, ExitCode.USAGE, "ambiguous", first, second)

    # AND a longer prefix names one job, as its whole id would
    shown = _idp("status", first[:12], *url, "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["job_id"] == first


@pytest.mark.ocr
def test_the_result_of_a_failed_job_says_why_it_failed(local_up: LocalUp) -> None:
    job_id = "fa11ed00" + "1" * 24
    error = {"code": "CORRUPT_DOCUMENT", "message": "the PDF has no page tree"}
    _put_job(local_up, job_id, status="FAILED", error=error)

    result = _idp("result", job_id[:10], "--endpoint-url", local_up.endpoint_url)
    assert_one_line(result, ExitCode.JOB_FAILED, "CORRUPT_DOCUMENT", "no page tree")


@pytest.fixture(scope="module")
def completed(local_up: LocalUp, pdf: Path) -> dict[str, Any]:
    """A one-page job that `idp submit --wait` saw to its end."""
    submitted = _idp("submit", str(pdf), "--wait", "300", "--json", *_url(local_up))
    assert submitted.exit_code == 0, submitted.output
    job: dict[str, Any] = json.loads(submitted.stdout)
    assert job["status"] == "COMPLETED"
    return job


def _url(local_up: LocalUp) -> tuple[str, str]:
    return ("--endpoint-url", local_up.endpoint_url)


@pytest.mark.ocr
def test_a_page_out_of_range_is_not_found_and_a_page_in_range_is_drawn(
    local_up: LocalUp, completed: dict[str, Any], tmp_path: Path
) -> None:
    prefix = completed["job_id"][:12]

    # WHEN page 9 of the one-page job is to be drawn
    result = _idp("overlay", prefix, "--page", "9", *_url(local_up))
    # THEN the command exits 3 saying there is no such page
    assert_one_line(result, ExitCode.NOT_FOUND, "no page 9")

    # AND page 1 is drawn, named in --json
    target = tmp_path / "page-1.png"
    drawn = _idp("overlay", prefix, "--out", str(target), "--json", *_url(local_up))
    assert drawn.exit_code == 0, drawn.output
    job_id = completed["job_id"]
    assert json.loads(drawn.stdout) == {"job_id": job_id, "page": 1, "overlay": str(target)}
    assert target.read_bytes().startswith(b"\x89PNG")


@pytest.mark.ocr
def test_status_shows_what_a_user_needs_and_verbose_the_rest(
    local_up: LocalUp, completed: dict[str, Any]
) -> None:
    prefix = completed["job_id"][:12]
    shown = _idp("status", prefix, *_url(local_up))
    assert shown.exit_code == 0, shown.output
    assert "COMPLETED" in shown.stdout
    assert "result_uri" in shown.stdout
    assert "dispatch_lease_until" not in shown.stdout

    everything = _idp("status", prefix, "--verbose", "--wait", "5", *_url(local_up))
    assert everything.exit_code == 0, everything.output
    assert "dispatch_lease_until" in everything.stdout


@pytest.mark.ocr
def test_piped_jobs_keep_whole_ids_and_names(local_up: LocalUp, completed: dict[str, Any]) -> None:
    # WHEN `idp jobs` prints to a pipe (CliRunner's output is no terminal), 80 columns wide
    listed = _idp("jobs", *_url(local_up), env={"COLUMNS": "80"})
    assert listed.exit_code == 0, listed.output
    # THEN the job's row holds its whole id and its file's whole name
    (row,) = [line for line in listed.stdout.splitlines() if completed["job_id"] in line]
    assert "one page.pdf" in row
