"""Job-finished events: one per job that ends, whoever ended it, under duplicated chunk events
and a merge that crashed; delivered by the emulator's EventBridge to a rule's queue."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from devkit.local.faults import Faults
from devkit.schemas import SCHEMAS_DIR
from devkit.synthetic import encode, pdf_pages, render_page
from idp.contract import names
from idp.contract.events import EVENT_SOURCE, JOB_FINISHED, JobFinished
from idp.contract.names import JobStatus, OcrModel
from tests.local_runs import running_chunked_pipeline, running_pipeline, wait_for

pytestmark = pytest.mark.ocr

JOB_TIMEOUT_S = 300.0
SCHEMA = SCHEMAS_DIR / "job-finished-event.schema.json"


def _events_until(pipeline: Any, job_ids: set[str], *, timeout_s: float = 60.0) -> list[Any]:
    """Every event received until each job has one, and a moment more for any duplicate."""
    received: list[Any] = []

    def every_job_has_one() -> bool:
        received.extend(pipeline.received_events())
        return job_ids <= {event["detail"]["job_id"] for event in received}

    wait_for(every_job_has_one, timeout_s=timeout_s, what="an event for every job")
    received.extend(pipeline.received_events(wait_s=3.0))
    return received


def test_each_finished_job_publishes_one_event_with_its_outcome(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN a pipeline, a readable page, and a file that is not an image
    page = encode(render_page(["Invoice 42 paid"], size=(900, 90), font_size=34, margin=20), "PNG")
    good, bad = tmp_path / "page.png", tmp_path / "broken.png"
    good.write_bytes(page)
    bad.write_bytes(b"not an image at all")
    with running_pipeline(
        tmp_path / "work", models_dir, vl_enabled=False, quiet_functions=True
    ) as pipeline:
        client = pipeline.client()
        ok = client.submit(good, model=OcrModel.PP_OCRV5)
        failed = client.submit(bad, model=OcrModel.PP_OCRV5)

        # WHEN both jobs end
        records = client.wait([ok.job_id, failed.job_id], timeout_s=JOB_TIMEOUT_S)
        events = _events_until(pipeline, {ok.job_id, failed.job_id})

    # THEN each has exactly one event, shaped as the contract says, carrying its outcome
    assert Counter(event["detail"]["job_id"] for event in events) == {
        ok.job_id: 1,
        failed.job_id: 1,
    }
    by_job = {event["detail"]["job_id"]: event for event in events}
    schema = json.loads(SCHEMA.read_text())
    for event in events:
        assert event["source"] == EVENT_SOURCE
        assert event["detail-type"] == JOB_FINISHED
        jsonschema.validate(event["detail"], schema)  # the published schema holds
    done = JobFinished.model_validate(by_job[ok.job_id]["detail"])
    record = records[ok.job_id]
    assert record is not None
    assert record["status"] == JobStatus.COMPLETED
    assert done.status == "COMPLETED"
    assert done.pages == 1
    assert done.error is None
    assert done.result_uri == record["result_uri"]
    assert done.pdf_uri == record["pdf_uri"]
    assert done.pdf_uri is not None
    assert done.pdf_uri.endswith(f"/{names.RESULT_PDF}")
    assert done.finished_at == record["finished_at"]
    assert done.duration_ms is not None
    assert done.timings_ms["total"] > 0
    refused = JobFinished.model_validate(by_job[failed.job_id]["detail"])
    assert refused.status == "FAILED"
    assert refused.result_uri is None
    assert refused.error is not None
    failed_record = records[failed.job_id]
    assert failed_record is not None
    assert refused.error.code == failed_record["error"]["code"]
    assert done.event_id != refused.event_id


def test_a_chunked_job_under_duplicate_chunk_events_and_a_crashed_merge_publishes_once(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN a 7-page PDF in 3-page chunks, two chunk events delivered twice, and a merger that
    # dies right after it claimed the merge (Lambda's retry merges again)
    pages = [
        render_page([f"Page {n} of the ledger"], size=(1000, 90), font_size=30, margin=20)
        for n in range(1, 8)
    ]
    path = tmp_path / "ledger.pdf"
    path.write_bytes(pdf_pages(pages))
    faults = Faults(duplicate_chunk_events=2, merge_crashes=1)
    with running_chunked_pipeline(tmp_path / "work", models_dir, faults, chunk_pages=3) as pipeline:
        client = pipeline.client()
        submitted = client.submit(path, model=OcrModel.PP_OCRV5)

        # WHEN the job ends
        record = client.wait([submitted.job_id], timeout_s=JOB_TIMEOUT_S)[submitted.job_id]
        events = _events_until(pipeline, {submitted.job_id})
        assert pipeline.runtime is not None
        fired = pipeline.runtime.lambda_faults

    # THEN the faults fired, the job completed, and it published exactly one event
    assert fired.duplicate_chunk_events.fired == 2
    assert fired.merge_crashes.fired == 1
    assert record is not None
    assert record["status"] == JobStatus.COMPLETED
    assert [event["detail"]["job_id"] for event in events] == [submitted.job_id]
    assert events[0]["detail"]["pages"] == 7
