"""Injected faults (issue: reliability): every job still ends, and ends once.

Faults are injected by the local runtime where AWS itself would fail — an execution
environment dying, an API throttling, the endpoint answering an error, DynamoDB rejecting a
write — never by editing handler code.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from devkit.local.faults import Faults
from devkit.local.pipeline import LocalPipeline
from devkit.local.runtime import LocalRuntime
from devkit.synthetic import encode, render_page, sample_lines
from devkit.textmetrics import character_error_rate
from idp.contract.job_record import JobRecord
from idp.contract.names import JobStatus, OcrModel
from tests.local_runs import running_pipeline

pytestmark = pytest.mark.ocr

JOB_TIMEOUT_S = 240.0


@contextmanager
def running(tmp_path: Path, models_dir: Path, **settings: Any) -> Iterator[LocalPipeline]:
    with running_pipeline(
        tmp_path / "work",
        models_dir,
        visibility_timeout_seconds=2,
        async_retry_delay_seconds=0.2,
        **settings,
    ) as pipeline:
        yield pipeline


def _document(tmp_path: Path, offset: int) -> tuple[Path, str]:
    lines = sample_lines(2, offset=offset)
    path = tmp_path / f"page-{offset}.png"
    page = render_page(lines, size=(1700, 80 + 66 * len(lines)), font_size=34, margin=50)
    path.write_bytes(encode(page, "PNG"))
    return path, "\n".join(lines)


def _run(pipeline: LocalPipeline, path: Path, model: OcrModel = OcrModel.PP_OCRV5) -> JobRecord:
    client = pipeline.client()
    submitted = client.submit(path, model=model)
    record = client.wait([submitted.job_id], timeout_s=JOB_TIMEOUT_S)[submitted.job_id]
    assert record is not None, "the job was never created"
    return record


def _assert_completed_with_text(pipeline: LocalPipeline, record: JobRecord, text: str) -> None:
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    result = pipeline.client().result_document(record["job_id"])
    assert character_error_rate(text, result["text"]) <= 0.02


@dataclass(frozen=True)
class _Job:
    """How one job went in a pipeline of its own, read before that pipeline stopped."""

    record: JobRecord
    runtime: LocalRuntime  # stopped: its counters still tell what fired


def _one_job(tmp_path: Path, models_dir: Path, offset: int, **settings: Any) -> _Job:
    """A PP-OCRv5 job of one page through a pipeline with these settings; a job that
    completes must hold the page's text."""
    with running(tmp_path, models_dir, **settings) as pipeline:
        path, text = _document(tmp_path, offset)
        record = _run(pipeline, path)
        if record["status"] == JobStatus.COMPLETED:
            _assert_completed_with_text(pipeline, record, text)
        assert pipeline.runtime is not None
        return _Job(record=record, runtime=pipeline.runtime)


def test_processor_crashing_on_every_attempt_ends_failed_with_attempts(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN a processor whose environment dies mid-job on each of its 3 async attempts
    faults = Faults(processor_crashes=3)
    with running(tmp_path, models_dir, faults=faults) as pipeline:
        path, _ = _document(tmp_path, 0)

        # WHEN a job is submitted
        record = _run(pipeline, path)

        # THEN retries are exhausted and the on-failure destination ends the job FAILED
        assert record["status"] == JobStatus.FAILED
        assert record["error"]["code"] == "PROCESSOR_CRASHED"
        assert record["attempts"] == 3
        assert pipeline.runtime is not None
        assert pipeline.runtime.lambda_faults.processor_crashes.fired == 3

        # AND the worker then completes the next good job
        good, good_text = _document(tmp_path, 3)
        _assert_completed_with_text(pipeline, _run(pipeline, good), good_text)


def test_job_left_processing_by_a_lost_failure_record_is_ended_by_the_sweep(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN a processor that dies on every attempt and an on-failure record that never arrives,
    # and a sweeper whose PROCESSING deadline is shortened for the test
    faults = Faults(processor_crashes=3, lost_failure_destinations=1)

    # WHEN a job is submitted
    record = _one_job(
        tmp_path,
        models_dir,
        27,
        faults=faults,
        stale_processing_seconds=15.0,
        sweep_interval_seconds=1.0,
    ).record

    # THEN the stale-job sweep ends it FAILED instead of leaving it PROCESSING forever
    assert record["status"] == JobStatus.FAILED
    assert record["error"]["code"] == "STALE_JOB"
    assert record["attempts"] == 3


def test_worker_killed_while_a_job_is_in_flight_is_picked_up_again(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN a processor environment that is killed once while it works on a job
    faults = Faults(processor_crashes=1)

    # WHEN a job runs
    record = _one_job(tmp_path, models_dir, 6, faults=faults).record

    # THEN Lambda's async retry picks it up again and it completes, attempts recorded
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    assert record["attempts"] == 2


def test_processor_exceeding_its_timeout_ends_failed_not_processing(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN a processor timeout shorter than its cold start (engine load alone takes seconds)
    # WHEN a job is submitted
    record = _one_job(tmp_path, models_dir, 9, processor_timeout_seconds=1.0).record

    # THEN every attempt times out and the job ends FAILED, never left PROCESSING
    assert record["status"] == JobStatus.FAILED
    assert record["error"]["code"] == "PROCESSOR_CRASHED"
    assert "timed out" in record["error"]["message"]
    assert record["attempts"] == 3


def test_vl_endpoint_error_ends_failed_through_the_error_topic(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN a VL container (substitute engine) that answers the first invocation with a 500
    faults = Faults(vl_inference_errors=1)
    with running(tmp_path, models_dir, faults=faults, vl_substitute=True) as pipeline:
        path, _ = _document(tmp_path, 12)

        # WHEN a PaddleOCR-VL job is submitted
        record = _run(pipeline, path, OcrModel.PADDLEOCR_VL)

        # THEN the error notification ends it FAILED with the container's error code
        assert record["status"] == JobStatus.FAILED
        assert record["error"]["code"] == "ENGINE_ERROR"

        # AND the next VL job completes
        good, good_text = _document(tmp_path, 15)
        _assert_completed_with_text(
            pipeline, _run(pipeline, good, OcrModel.PADDLEOCR_VL), good_text
        )


def test_throttled_invokes_are_retried_and_the_jobs_complete(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN Lambda Invoke and InvokeEndpointAsync throttling more calls in a row than the
    # SDK's own retries (3 attempts) absorb
    faults = Faults(lambda_invoke_throttles=4, endpoint_invoke_throttles=4)
    with running(tmp_path, models_dir, faults=faults, vl_substitute=True) as pipeline:
        cpu_path, cpu_text = _document(tmp_path, 18)
        vl_path, vl_text = _document(tmp_path, 21)

        # WHEN a CPU job and a VL job are submitted
        cpu = _run(pipeline, cpu_path)
        vl = _run(pipeline, vl_path, OcrModel.PADDLEOCR_VL)

        # THEN the throttled invoke went back to the queue, the throttled InvokeEndpointAsync (made
        # by the processor, which submits VL jobs) was retried by Lambda's async retry, until
        # each call went through; both jobs complete, each OCR'd once
        _assert_completed_with_text(pipeline, cpu, cpu_text)
        _assert_completed_with_text(pipeline, vl, vl_text)
        assert cpu["dispatch_failures"] >= 1
        assert cpu["attempts"] == 1  # one OCR run despite the retried message
        assert pipeline.runtime is not None
        assert pipeline.runtime.vl.throttled == 4
        # one event to submit it, one (from the completion handler) to write its result.pdf
        assert pipeline.runtime.stats.processor_events[vl["job_id"]] == 2


def test_transiently_rejected_status_writes_are_retried_without_lost_updates(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN DynamoDB rejecting the first writes as throttled
    faults = Faults(dynamodb_write_throttles=3)

    # WHEN a job runs
    job = _one_job(tmp_path, models_dir, 24, faults=faults)

    # THEN the SDK's retries land every write: the record holds the whole story
    record = job.record
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    assert job.runtime.dynamodb_proxy is not None
    assert job.runtime.dynamodb_proxy.throttles.fired == 3
    assert record["result_uri"].endswith("/result.json")
    assert record["page_count"] == 1
    assert record["attempts"] == 1
    assert {"ocr", "total"} <= set(record["timings_ms"])
