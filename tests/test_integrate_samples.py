"""The Integrate page (docs/integrate.md), run as written: its boto3 sample against the
emulated jobs table (the table the stack deploys, with jobs written by the job store), and its
AWS CLI blocks through bash against a running local pipeline."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from devkit.dead_letters import DeadLetters
from devkit.local.emulator import AwsEndpoint, EmbeddedAws
from devkit.local.pipeline import LocalPipeline
from idp.contract.errors import CorruptDocument
from idp.contract.events import EVENT_SOURCE, JOB_FINISHED
from idp.contract.names import JobStatus
from idp.jobstore.store import JobStore, jobs_table_definition
from tests.docs_samples import integrate_sample
from tests.job_records import create_queued_job, create_refused_job
from tests.local_runs import run_command, running_pipeline, wait_for
from tests.paths import REPO_ROOT

REPO = REPO_ROOT
DEMO_LETTER = REPO / "samples" / "sample-letter.pdf"
TABLE = "jobs"
JOB_TIMEOUT_S = 300.0


_AT_THE_EMULATOR = 'aws() { command aws --endpoint-url "$AWS_ENDPOINT_URL" "$@"; }\n'


def _run_bash(sample: str, pipeline: LocalPipeline, cwd: Path) -> str:
    """A block of the page through bash, with the stack's names as the page says and the dev
    dependencies' `aws` and `idp` first on PATH; its stdout. `aws` is pointed at the emulator
    with --endpoint-url, as one points it at any local AWS (awscli v1 reads AWS_ENDPOINT_URL
    for S3 but not for SQS)."""
    resources = pipeline.resources
    assert resources is not None
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        **pipeline.endpoint.process_env(),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "IDP_ENDPOINT_URL": pipeline.endpoint.url or "",
        "COLUMNS": "200",  # rich's tables: one row per line
        "INPUT_BUCKET": resources.input_bucket,
        "RESULTS_BUCKET": resources.results_bucket,
        "JOBS_TABLE": resources.jobs_table,
        "JOB_QUEUE_URL": resources.queue_url,
        "DLQ_URL": resources.dlq_url,
    }
    script = ["bash", "-euo", "pipefail", "-c", _AT_THE_EMULATOR + sample]
    done = run_command(script, cwd=cwd, env=env, timeout=120)
    assert done.returncode == 0, f"{sample}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    return done.stdout


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
    create_refused_job(
        store,
        "bad",
        CorruptDocument("the PDF has no cross-reference table"),
        input_key="uploads/bad.pdf",
    )
    for job_id in ("waiting", "done"):
        create_queued_job(store, job_id, input_key=f"uploads/{job_id}.pdf")
    store.mark_completed("done", result_uri="s3://r/done", page_count=1, timings_ms={})

    # WHEN the page's sample runs as written
    sample = integrate_sample("python", "by-status")
    scope: dict[str, object] = {"jobs_table": TABLE}
    exec(sample, scope)  # the page's own code, on the emulator

    # THEN it found the failed job, with what its comment promises
    failed = scope["failed"]
    assert isinstance(failed, list)
    assert [item["job_id"] for item in failed] == ["bad"]
    assert failed[0]["status"] == JobStatus.FAILED
    assert failed[0]["error"]["code"] == CorruptDocument.code
    assert failed[0]["input_uri"] == "s3://in/uploads/bad.pdf"


@pytest.mark.ocr
def test_the_aws_cli_samples_submit_fetch_inspect_and_redrive(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN a running local pipeline, the letter the samples name, and a message that names no
    # job (it is retried, then dead-lettered)
    shutil.copy(DEMO_LETTER, tmp_path / "letter.pdf")
    with running_pipeline(
        tmp_path / "work",
        models_dir,
        vl_enabled=False,
        visibility_timeout_seconds=1,
        quiet_functions=True,
    ) as pipeline:
        client = pipeline.client()
        resources = pipeline.resources
        assert resources is not None
        sqs = pipeline.endpoint.client("sqs")

        # WHEN the submitting block runs: a drop and a message
        _run_bash(integrate_sample("bash", "aws sqs send-message"), pipeline, tmp_path)
        wait_for(lambda: len(client.jobs()) == 2, timeout_s=60, what="both jobs recorded")
        ids = [record["job_id"] for record in client.jobs()]
        records = client.wait(ids, timeout_s=JOB_TIMEOUT_S)
        # ... the result block fetches the message's job
        fetched = _run_bash(integrate_sample("bash", "Item.result_uri.S"), pipeline, tmp_path)

        # ... and a message that names nothing dead-letters, is listed, and is redriven
        sqs.send_message(QueueUrl=resources.queue_url, MessageBody="not a job")
        dead_letters = DeadLetters(sqs, dlq_url=resources.dlq_url, queue_url=resources.queue_url)
        wait_for(lambda: dead_letters.depth() == 1, timeout_s=120, what="the DLQ to hold it")
        listed = _run_bash(integrate_sample("bash", "idp dlq redrive"), pipeline, tmp_path)
        depth_after = dead_letters.depth()

    # THEN both jobs completed: the drop with its key's model and metadata's language
    assert "letter-1" in ids
    by_id = {job_id: record for job_id, record in records.items() if record is not None}
    assert {record["status"] for record in by_id.values()} == {JobStatus.COMPLETED}
    (dropped,) = [record for job_id, record in by_id.items() if job_id != "letter-1"]
    assert dropped["input_uri"].endswith("/input/PP-OCRv5/letters/letter.pdf")
    assert dropped["model"] == "PP-OCRv5"
    assert dropped["lang"] == "en"
    assert fetched.splitlines()[0] == "COMPLETED"
    result = json.loads((tmp_path / "letter-1.json").read_text())
    assert "Total amount payable" in result["text"]
    # The CLI and `idp dlq list` both showed the dead letter; the redrive emptied the DLQ.
    assert listed.count("not a job") == 2
    assert "1 messages sent back to the job queue" in listed
    assert depth_after == 0


def test_the_failed_jobs_rule_pattern_passes_failed_events_only(emulator: AwsEndpoint) -> None:
    # GIVEN a bus with the page's rule, delivering to a queue
    pattern = integrate_sample("json", '"detail-type"')
    events, sqs = emulator.client("events"), emulator.client("sqs")
    events.create_event_bus(Name="jobs")
    queue_url = sqs.create_queue(QueueName="failed-jobs")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    events.put_rule(Name="failed", EventBusName="jobs", EventPattern=pattern)
    events.put_targets(
        Rule="failed", EventBusName="jobs", Targets=[{"Id": "queue", "Arn": queue_arn}]
    )

    # WHEN a FAILED and a COMPLETED job's events are put as the events function puts them
    for job_id, status in (("bad", "FAILED"), ("good", "COMPLETED")):
        detail = {"job_id": job_id, "status": status}
        events.put_events(
            Entries=[
                {
                    "Source": EVENT_SOURCE,
                    "DetailType": JOB_FINISHED,
                    "Detail": json.dumps(detail),
                    "EventBusName": "jobs",
                }
            ]
        )

    # THEN only the FAILED one reaches the queue
    received = sqs.receive_message(
        QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=2
    ).get("Messages", [])
    assert [json.loads(m["Body"])["detail"]["job_id"] for m in received] == ["bad"]
