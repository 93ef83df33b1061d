"""PaddleOCR-VL results at the processor: the endpoint read the pages, the processor finishes.

The completion handler hands every successful inference to the processor (task
ENDPOINT_RESULT, tests/lambdas/test_completion.py); here the processor turns the endpoint's
output into the job's result files and final status, or counts a chunk and merges the last
one, through the same code as the pages it reads itself. The endpoint's outputs are written into
moto's results bucket as the container writes them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from devkit.synthetic import long_pdf
from idp.contract import names
from idp.contract.errors import CorruptDocument
from idp.contract.jobs import DispatchedJob, EndpointResult, ProcessorTask
from idp.contract.names import JobStatus, OcrModel
from idp.contract.results import (
    Block,
    EngineInfo,
    Line,
    OcrResult,
    PageResult,
    SourceInfo,
    result_key,
)
from idp.document.ocr.registry import EngineRegistry
from idp.flow.chunks.plan import ChunkPlan, plan_key
from ocr_processor_image import handler
from ocr_processor_image.job import process_job
from tests.pdftext import pdf_text
from tests.processor_account import INPUT_BUCKET, RESULTS_BUCKET, Aws

BOX = ((10.0, 10.0), (400.0, 10.0), (400.0, 40.0), (10.0, 40.0))
Invoke = Callable[[DispatchedJob], dict[str, Any]]
RECEIVED = datetime(2026, 11, 21, 10, 1, tzinfo=UTC)
FINISHED = datetime(2026, 11, 21, 10, 3, 12, tzinfo=UTC)


@pytest.fixture
def invoke(aws: Aws, empty_cache_registry: EngineRegistry, lambda_context: Any) -> Iterator[Invoke]:
    """The processor's handler with a VL endpoint (moto's sagemaker-runtime accepts the
    inferences, runs nothing), chunks of 2 pages, and no engine weights: finishing a VL job
    loads no engine."""
    handler.set_warm_state(aws.with_vl_endpoint(empty_cache_registry, chunk_pages=2))
    yield lambda job: handler.lambda_handler(json.loads(job.model_dump_json()), lambda_context)
    handler.set_warm_state(None)


def endpoint_output(job: DispatchedJob, pages: range, *, total_ms: float = 5300.0) -> OcrResult:
    """What the VL container answers for `pages`: an OcrResult under the container's view."""
    results = [
        PageResult(
            page=n,
            width=1300,
            height=260,
            lines=[Line(text=f"Page {n} report", box=BOX, confidence=0.98)],
            blocks=[Block(type="title", box=BOX, text=f"Page {n} report")],
            markdown=f"# Page {n} report",
        )
        for n in pages
    ]
    return OcrResult.assemble(
        job_id="container-view",
        model=OcrModel.PADDLEOCR_VL.value,
        lang="en",
        engine=EngineInfo(name="paddleocr-vl", version="3.7.0", models=["PaddleOCR-VL-0.9B"]),
        source=SourceInfo(
            bucket=job.bucket,
            key=job.key,
            sha256="ab" * 32,
            media_type="application/pdf",
            page_count=len(results),
            size_bytes=1,
        ),
        pages=results,
        timings_ms={"ocr": total_ms - 100, "total": total_ms},
    )


def vl_job(aws: Aws, pages: int = 1, *, dispatched: bool = True) -> DispatchedJob:
    """A QUEUED PaddleOCR-VL job for an uploaded PDF of `pages` pages."""
    data, _ = long_pdf(pages)
    job = aws.create_job(f"input/PaddleOCR-VL/{pages}-pages.pdf", data, model=OcrModel.PADDLEOCR_VL)
    if dispatched:
        aws.store.claim_dispatch(job.job_id)
        aws.store.record_dispatch(job.job_id, inference_id=job.job_id)
    return job


def result_event(
    aws: Aws, job: DispatchedJob, body: str | None, *, name: str | None = None
) -> DispatchedJob:
    """The completion handler's hand-over: the output `body` written where SageMaker puts it
    (None: no output object)."""
    key = f"{names.VL_OUTPUT_PREFIX}{name or job.job_id}.out"
    if body is not None:
        aws.s3.put_object(Bucket=RESULTS_BUCKET, Key=key, Body=body)
    return job.model_copy(
        update={
            "task": ProcessorTask.ENDPOINT_RESULT,
            "endpoint_result": EndpointResult(
                output_location=f"s3://{RESULTS_BUCKET}/{key}",
                received_time=RECEIVED,
                event_time=FINISHED,
            ),
        }
    )


def test_a_whole_documents_output_becomes_its_result_files_and_completes_the_job(
    aws: Aws, invoke: Invoke, tmp_path: Path
) -> None:
    # GIVEN a dispatched VL job whose output the endpoint has written
    job = vl_job(aws)
    event = result_event(aws, job, endpoint_output(job, range(1, 2)).model_dump_json())

    # WHEN the processor is handed the endpoint's result
    response = invoke(event)

    # THEN result.json (under this job's identity), result.md and result.pdf are written and
    # the job is COMPLETED with where its time went
    assert response["status"] == "COMPLETED"
    record = aws.record(job.job_id)
    assert record["status"] == JobStatus.COMPLETED
    assert (
        record["result_uri"] == f"s3://{RESULTS_BUCKET}/{result_key(job.job_id, owner=job.owner)}"
    )
    assert (record["page_count"], record["engine"]["name"]) == (1, "paddleocr-vl")
    assert record["inference_output"] == event.endpoint_result.output_location  # type: ignore[union-attr]
    body = aws.object_bytes(RESULTS_BUCKET, result_key(job.job_id, owner=job.owner))
    result = OcrResult.model_validate_json(body)
    assert (result.job_id, result.model, result.text) == (
        job.job_id,
        "PaddleOCR-VL",
        "Page 1 report",
    )
    assert (result.source.bucket, result.source.key) == (INPUT_BUCKET, job.key)
    assert body == result.model_dump_json().encode()  # the one writer's bytes
    markdown = aws.object_bytes(
        RESULTS_BUCKET, result_key(job.job_id, names.RESULT_MD, owner=job.owner)
    )
    assert markdown.decode() == "# Page 1 report"
    assert record["markdown_uri"].endswith(names.RESULT_MD)
    pdf = tmp_path / names.RESULT_PDF
    pdf.write_bytes(
        aws.object_bytes(RESULTS_BUCKET, result_key(job.job_id, names.RESULT_PDF, owner=job.owner))
    )
    assert pdf_text(pdf).split() == ["Page", "1", "report"]
    timings = record["timings_ms"]
    assert timings["inference"] == 5300.0
    assert timings["endpoint_queue"] == 132_000.0 - 5300.0
    assert {"dispatch", "end_to_end", "write_result", "searchable_pdf"} <= timings.keys()


def test_a_job_never_marked_dispatched_still_completes(aws: Aws, invoke: Invoke) -> None:
    # GIVEN a QUEUED VL job whose dispatch was never confirmed (the result overtook it)
    job = vl_job(aws, dispatched=False)
    event = result_event(aws, job, endpoint_output(job, range(1, 2)).model_dump_json())

    # WHEN its result is handed over
    invoke(event)

    # THEN the job completes
    assert aws.record(job.job_id)["status"] == JobStatus.COMPLETED


def test_a_result_handed_over_again_changes_nothing(aws: Aws, invoke: Invoke) -> None:
    # GIVEN a VL job completed from its output
    job = vl_job(aws)
    event = result_event(aws, job, endpoint_output(job, range(1, 2)).model_dump_json())
    invoke(event)
    completed = aws.record(job.job_id)

    # WHEN the same result is handed over again (a duplicate notification)
    response = invoke(event)

    # THEN nothing changes
    assert response["status"] == "SKIPPED"
    assert aws.record(job.job_id) == completed


def test_a_result_after_the_job_failed_does_not_revive_it(aws: Aws, invoke: Invoke) -> None:
    # GIVEN a VL job that already ended FAILED
    job = vl_job(aws)
    aws.store.mark_failed(job.job_id, CorruptDocument("the PDF is truncated"))
    event = result_event(aws, job, endpoint_output(job, range(1, 2)).model_dump_json())

    # WHEN a late result is handed over
    invoke(event)

    # THEN the job stays FAILED and no result is published
    assert aws.record(job.job_id)["status"] == JobStatus.FAILED
    assert aws.keys(RESULTS_BUCKET, names.RESULTS_PREFIX) == []


@pytest.mark.parametrize(
    ("output", "code"),
    [
        pytest.param(
            json.dumps({"error": {"code": "TOO_MANY_PAGES", "message": "412 pages; limit 200"}}),
            "TOO_MANY_PAGES",
            id="error-body",
        ),
        pytest.param("<html>502 Bad Gateway</html>", "INFERENCE_FAILED", id="not-json"),
        pytest.param(json.dumps({"pages": "none"}), "INFERENCE_FAILED", id="not-a-result"),
        pytest.param(None, "INFERENCE_FAILED", id="output-missing"),
    ],
)
def test_an_unusable_output_fails_the_job(
    aws: Aws, invoke: Invoke, output: str | None, code: str
) -> None:
    # GIVEN a VL job whose output is an error body, garbage, or missing
    job = vl_job(aws)
    event = result_event(aws, job, output)

    # WHEN its result is handed over
    response = invoke(event)

    # THEN the job is FAILED with the matching code
    assert response["status"] == "FAILED"
    record = aws.record(job.job_id)
    assert (record["status"], record["error"]["code"]) == (JobStatus.FAILED, code)


def test_an_output_outside_the_endpoints_prefix_is_not_read(aws: Aws, invoke: Invoke) -> None:
    # GIVEN a notification naming a good result, but not under the endpoint's output prefix
    # (one a sender chose, or another job's object)
    job = vl_job(aws)
    key = f"{names.RESULTS_PREFIX}{job.job_id}.out"
    body = endpoint_output(job, range(1, 2)).model_dump_json()
    aws.s3.put_object(Bucket=RESULTS_BUCKET, Key=key, Body=body)
    location = EndpointResult(output_location=f"s3://{RESULTS_BUCKET}/{key}")
    event = result_event(aws, job, None).model_copy(update={"endpoint_result": location})

    # WHEN it is handed over, THEN the job fails: nothing outside the prefix is read as output
    assert invoke(event)["status"] == "FAILED"
    record = aws.record(job.job_id)
    assert record["error"]["code"] == "INFERENCE_FAILED"
    assert "not under its output prefix" in record["error"]["message"]


# -- chunks of a large document --------------------------------------------------------------------
def fanned_out_vl_job(aws: Aws, invoke: Invoke, pages: int = 4) -> tuple[DispatchedJob, ChunkPlan]:
    """A VL job of `pages` pages the processor fanned out in chunks of 2 to the endpoint."""
    job = vl_job(aws, pages)
    assert invoke(job)["status"] == "FANNED_OUT"
    plan = ChunkPlan.model_validate_json(aws.object_bytes(RESULTS_BUCKET, plan_key(job.job_id)))
    return job, plan


def chunk_result(aws: Aws, job: DispatchedJob, plan: ChunkPlan, index: int) -> DispatchedJob:
    """The hand-over of chunk `index`'s output, as the completion handler sends it."""
    chunk = plan.chunks[index]
    output = endpoint_output(job, range(chunk.first_page, chunk.last_page + 1))
    event = result_event(aws, job, output.model_dump_json(), name=f"{job.job_id}-c{index:05d}")
    return event.model_copy(update={"chunk": chunk})


def test_chunk_results_count_once_and_the_last_one_merges_them_in_page_order(
    aws: Aws, invoke: Invoke, tmp_path: Path
) -> None:
    # GIVEN a 4-page VL document submitted as 2 chunks of 2 pages
    job, plan = fanned_out_vl_job(aws, invoke)

    # WHEN the second chunk's result is handed over twice (SNS may duplicate), then the first's
    first = invoke(chunk_result(aws, job, plan, 1))
    again = invoke(chunk_result(aws, job, plan, 1))
    counted_once = aws.record(job.job_id)
    last = invoke(chunk_result(aws, job, plan, 0))

    # THEN the duplicate counted nothing, the last chunk completed the job, pages are in order
    assert (first["status"], again["status"]) == ("CHUNK_DONE", "CHUNK_DONE")
    assert (counted_once["chunks_done"], counted_once["pages_done"]) == (1, 2)
    assert last["status"] == "COMPLETED"
    record = aws.record(job.job_id)
    assert (record["status"], record["page_count"]) == (JobStatus.COMPLETED, 4)
    body = aws.object_bytes(RESULTS_BUCKET, result_key(job.job_id, owner=job.owner))
    result = OcrResult.model_validate_json(body)
    assert body == result.model_dump_json().encode()  # the one writer's bytes
    assert [page.page for page in result.pages] == [1, 2, 3, 4]
    assert result.text == "Page 1 report\n\nPage 2 report\n\nPage 3 report\n\nPage 4 report"
    assert result.engine.name == "paddleocr-vl"
    # AND result.pdf joins the chunks' pages, each with its text, in order
    pdf = tmp_path / names.RESULT_PDF
    pdf.write_bytes(
        aws.object_bytes(RESULTS_BUCKET, result_key(job.job_id, names.RESULT_PDF, owner=job.owner))
    )
    assert [pdf_text(pdf, n).split() for n in (1, 4)] == [
        ["Page", "1", "report"],
        ["Page", "4", "report"],
    ]
    # AND its work files are gone
    assert aws.keys(RESULTS_BUCKET, f"{names.WORK_PREFIX}{job.job_id}/") == []


def test_a_merge_that_crashed_is_redone_by_the_retry_of_the_same_event(
    aws: Aws, invoke: Invoke, empty_cache_registry: EngineRegistry
) -> None:
    # GIVEN a chunked VL job with one chunk counted, and S3 failing the merged result's upload
    job, plan = fanned_out_vl_job(aws, invoke)
    invoke(chunk_result(aws, job, plan, 0))
    last = chunk_result(aws, job, plan, 1)
    warm = handler.get_warm_state()
    # The chunk's part of result.pdf and its partial are written; the merge's first upload fails.
    calls = {"passing": 2, "failing": 1}

    def fail_once(**_: Any) -> None:
        if calls["passing"]:
            calls["passing"] -= 1
        elif calls["failing"]:
            calls["failing"] -= 1
            raise ClientError({"Error": {"Code": "InternalError", "Message": "boom"}}, "Upload")

    aws.s3.meta.events.register("before-call.s3.PutObject", fail_once)
    try:
        # WHEN the last chunk's invocation crashes while merging, another delivery of it arrives
        # while the merge is leased, and Lambda retries the crashed event (same request id)
        with pytest.raises(ClientError, match="InternalError"):
            process_job(last, warm, invocation_id="delivery-1")
        crashed = aws.record(job.job_id)
        other = process_job(last, warm, invocation_id="delivery-2")
        retried = process_job(last, warm, invocation_id="delivery-1")
    finally:
        aws.s3.meta.events.unregister("before-call.s3.PutObject", fail_once)

    # THEN the chunk counted once, the other delivery left the merge to its holder, and the
    # retry merged and completed the job
    assert (crashed["status"], crashed["chunks_done"]) == (JobStatus.QUEUED, 2)
    assert other.status.value == "CHUNK_DONE"
    assert retried.status.value == "COMPLETED"
    assert aws.record(job.job_id)["page_count"] == 4
