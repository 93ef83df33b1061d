"""The README's Integrate section, run as written: its boto3 sample against the emulated jobs
table (the table the stack deploys, with jobs written by the job store)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from devkit.local.emulator import AwsEndpoint, EmbeddedAws
from idp.contract.errors import CorruptDocument
from idp.contract.names import JobStatus, OcrModel
from idp.jobstore.store import JobStore, jobs_table_definition

README = Path(__file__).resolve().parents[1] / "README.md"
TABLE = "jobs"


def _integrate_python_samples() -> list[str]:
    text = README.read_text()
    section = text[text.index("## Integrate") : text.index("## Deploy")]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsEndpoint]:
    """The emulator, reached by a plain `boto3.resource(...)` as the sample creates it."""
    with EmbeddedAws() as aws:
        for key, value in aws.endpoint.process_env().items():
            monkeypatch.setenv(key, value)
        yield aws.endpoint


def test_the_failed_in_the_last_hour_sample_finds_exactly_the_failed_jobs(
    emulator: AwsEndpoint,
) -> None:
    # GIVEN the jobs table with a failed, a queued and a completed job
    emulator.client("dynamodb").create_table(**jobs_table_definition(TABLE))
    store = JobStore(emulator.resource("dynamodb").Table(TABLE))
    store.create_failed(
        job_id="bad",
        error=CorruptDocument("the PDF has no cross-reference table"),
        model="PP-OCRv5",
        lang="en",
        input_bucket="in",
        input_key="uploads/bad.pdf",
    )
    for job_id in ("waiting", "done"):
        store.create(
            job_id=job_id,
            model=OcrModel.PP_OCRV5,
            lang="en",
            input_bucket="in",
            input_key=f"uploads/{job_id}.pdf",
            options={},
        )
    store.mark_completed("done", result_uri="s3://r/done", page_count=1, timings_ms={})

    # WHEN the README's sample runs as written
    (sample,) = _integrate_python_samples()
    scope: dict[str, object] = {"jobs_table": TABLE}
    exec(sample, scope)  # the README's own code, on the emulator

    # THEN it found the failed job, with what its comment promises
    failed = scope["failed"]
    assert isinstance(failed, list)
    assert [item["job_id"] for item in failed] == ["bad"]
    assert failed[0]["status"] == JobStatus.FAILED
    assert failed[0]["error"]["code"] == CorruptDocument.code
    assert failed[0]["input_uri"] == "s3://in/uploads/bad.pdf"
