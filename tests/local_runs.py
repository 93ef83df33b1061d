"""Running the local pipeline in tests: a pipeline with given knobs, waiting, reading results."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import pytest

from devkit.client import PipelineClient
from devkit.local.faults import Faults
from devkit.local.pipeline import LocalPipeline
from devkit.local.settings import LocalSettings
from devkit.synthetic import long_pdf
from idp.contract.job_record import JobRecord
from idp.contract.languages import DEFAULT_LANGUAGE
from idp.contract.names import JobStatus, OcrModel
from tests.paths import REPO_ROOT

# The longest a test waits for a local job: a cold worker loads its engine first, and an Office
# or VL job converts and reads every page on a 2-core machine.
JOB_TIMEOUT_S: Final = 600.0


@contextmanager
def running_pipeline(
    work_dir: Path, models_dir: Path | None, **knobs: Any
) -> Iterator[LocalPipeline]:
    """A started local pipeline with these LocalSettings knobs; stopped when the block ends."""
    settings = LocalSettings(work_dir=work_dir, models_dir=models_dir, **knobs)
    with LocalPipeline(settings) as pipeline:
        yield pipeline


@contextmanager
def running_chunked_pipeline(
    work_dir: Path, models_dir: Path, faults: Faults, *, chunk_pages: int
) -> Iterator[LocalPipeline]:
    """A CPU-only pipeline reading PDFs in `chunk_pages`-page chunks on two processor workers,
    with `faults` armed and every retry quick (a message visible again after 2 s, an async
    invoke retried after 0.2 s), so that recovering from a fault fits in a test."""
    with running_pipeline(
        work_dir,
        models_dir,
        vl_enabled=False,
        visibility_timeout_seconds=2,
        async_retry_delay_seconds=0.2,
        processor_concurrency=2,
        chunk_pages=chunk_pages,
        quiet_functions=True,
        faults=faults,
    ) as pipeline:
        yield pipeline


@contextmanager
def running_vl_pipeline(work_dir: Path, models_dir: Path, **knobs: Any) -> Iterator[LocalPipeline]:
    """A quiet pipeline whose VL endpoint runs the substitute engine, from 0 instances. Its idle
    alarm has AWS's 60 s periods (2 s locally by default), so that it cannot scale the endpoint
    in while the processor, slow to start on a loaded machine, is still on the job."""
    with running_pipeline(
        work_dir,
        models_dir,
        vl_substitute=True,
        quiet_functions=True,
        alarm_period_seconds=60,
        **knobs,
    ) as pipeline:
        yield pipeline


def finished_job(
    client: PipelineClient,
    path: Path,
    *,
    model: OcrModel,
    timeout_s: float,
    lang: str = DEFAULT_LANGUAGE,
) -> JobRecord:
    """Submit `path` and wait, at most `timeout_s`, for its job to end: its record."""
    job_id = client.submit(path, model=model, lang=lang).job_id
    record = client.wait([job_id], timeout_s=timeout_s)[job_id]
    assert record is not None, f"job {job_id} has no record"
    return record


def completed_result(
    client: PipelineClient, path: Path, *, model: OcrModel, timeout_s: float
) -> dict[str, Any]:
    """Submit `path`, wait for its job and require it COMPLETED: its result document."""
    record = finished_job(client, path, model=model, timeout_s=timeout_s)
    assert record["status"] == JobStatus.COMPLETED, record
    return client.result_document(record["job_id"])


REPOSITORY = REPO_ROOT


def run_command(
    command: list[str], *, cwd: Path = REPOSITORY, env: dict[str, str] | None = None, timeout: float
) -> subprocess.CompletedProcess[str]:
    """A command run to its end as a user runs it, its output captured as text."""
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def idp_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The `idp` CLI run as a user runs it, in a process of its own, from the repository."""
    return run_command([sys.executable, "-m", "devkit.cli.main", *args], env=env, timeout=1500)


def wait_for(
    predicate: Callable[[], bool], *, timeout_s: float, what: str, poll_s: float = 0.2
) -> None:
    """Until `predicate()` holds; fails the test after `timeout_s`, naming `what` it waited for."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(poll_s)
    pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}")


def write_long_pdf(path: Path, pages: int) -> list[str]:
    """devkit.synthetic.long_pdf written to `path`; the text of each page."""
    data, texts = long_pdf(pages)
    path.write_bytes(data)
    return texts


def page_text(result: dict[str, Any], page: int) -> str:
    """The recognized lines of page `page` (1-based) of a result document."""
    return "\n".join(line["text"] for line in result["pages"][page - 1]["lines"])
