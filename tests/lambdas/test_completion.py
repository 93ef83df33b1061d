"""Completion handler: SageMaker success and error notifications, processor crash records."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from idp.contract import names
from idp.contract.errors import CorruptDocument
from idp.contract.jobs import DispatchedJob, ProcessorTask
from idp.contract.names import JobStatus, OcrModel
from idp.flow.chunks.plan import ChunkPlan, plan_chunks, plan_key
from idp.flow.vl_submit import inference_id, manifest_key
from lambdas.completion.recorder import Completion, CompletionRecorder
from tests.lambdas.support import (
    FAILURE_KEY,
    INPUT_BUCKET,
    OCR_JOB,
    OUTPUT_KEY,
    RESULTS_BUCKET,
    VL_JOB,
    EmulatedAws,
    RecordingProcessorInvoker,
    endpoint_result,
    queue_vl_job,
    sns_message,
)


def put_output(aws: EmulatedAws, body: str | bytes) -> None:
    aws.s3.put_object(Bucket=RESULTS_BUCKET, Key=OUTPUT_KEY, Body=body)


def vl_job_with_its_output(aws: EmulatedAws, *, dispatched: bool = True) -> None:
    """A queued VL job whose output the endpoint has written."""
    queue_vl_job(aws, dispatched=dispatched)
    put_output(aws, endpoint_result().model_dump_json())


def success() -> str:
    return json.dumps(sns_message("sns_sagemaker_async_success.json"))


def error(**changes: Any) -> str:
    message = sns_message("sns_sagemaker_async_error.json")
    message.update(changes)
    return json.dumps(message)


# -- SageMaker success: handed to the processor ---------------------------------------------------
def test_success_hands_the_job_to_the_processor_with_the_endpoints_output(
    aws: EmulatedAws, recorder: CompletionRecorder, processor_runs: RecordingProcessorInvoker
) -> None:
    # GIVEN a dispatched VL job whose output the endpoint has written
    vl_job_with_its_output(aws)

    # WHEN the success notification arrives
    outcome = recorder.handle_message(success())

    # THEN the processor is asked, once, to finish the job from that output, with the times
    # the endpoint received and finished it; the completion handler writes nothing itself
    assert outcome.completion is Completion.HANDED_OVER
    [event] = processor_runs.events
    assert (event.job_id, event.task, event.key, event.chunk) == (
        VL_JOB,
        ProcessorTask.ENDPOINT_RESULT,
        "input/PaddleOCR-VL/report.pdf",
        None,
    )
    assert event.endpoint_result is not None
    assert event.endpoint_result.output_location == f"s3://{RESULTS_BUCKET}/{OUTPUT_KEY}"
    assert event.endpoint_result.received_time == datetime(2026, 11, 21, 10, 1, tzinfo=UTC)
    assert event.endpoint_result.event_time == datetime(2026, 11, 21, 10, 3, 12, tzinfo=UTC)
    assert aws.job(VL_JOB)["status"] == JobStatus.QUEUED
    listed = aws.s3.list_objects_v2(Bucket=RESULTS_BUCKET, Prefix=names.RESULTS_PREFIX)
    assert listed.get("KeyCount") == 0


def test_success_for_a_job_never_marked_dispatched_is_still_handed_over(
    aws: EmulatedAws, recorder: CompletionRecorder, processor_runs: RecordingProcessorInvoker
) -> None:
    # GIVEN a QUEUED job whose dispatch was never confirmed (the notification overtook it)
    vl_job_with_its_output(aws, dispatched=False)

    # WHEN the success notification arrives
    outcome = recorder.handle_message(success())

    # THEN the processor finishes it
    assert outcome.completion is Completion.HANDED_OVER
    assert processor_runs.runs_of(VL_JOB) == 1


@pytest.mark.parametrize("ended", [JobStatus.COMPLETED, JobStatus.FAILED])
def test_a_success_after_the_job_ended_changes_nothing(
    aws: EmulatedAws,
    recorder: CompletionRecorder,
    processor_runs: RecordingProcessorInvoker,
    ended: JobStatus,
) -> None:
    # GIVEN a job that already ended (completed by a first delivery, or failed)
    vl_job_with_its_output(aws)
    if ended is JobStatus.COMPLETED:
        aws.store.mark_completed(
            VL_JOB, result_uri="s3://r/result.json", page_count=1, timings_ms={}
        )
    else:
        aws.store.mark_failed(VL_JOB, CorruptDocument("the PDF is truncated"))
    before = aws.job(VL_JOB)

    # WHEN a duplicate or late success notification arrives
    outcome = recorder.handle_message(success())

    # THEN nothing changes and nothing is handed over
    assert outcome.completion is Completion.ALREADY_FINISHED
    assert aws.job(VL_JOB) == before
    assert processor_runs.events == []


# -- SageMaker error ----------------------------------------------------------------------------
def test_error_notification_uses_the_code_in_the_failure_object(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a VL job whose container answered 422 with a JSON error body
    queue_vl_job(aws)
    body = {"error": {"code": "ENCRYPTED_DOCUMENT", "message": "the PDF needs a password"}}
    aws.s3.put_object(Bucket=RESULTS_BUCKET, Key=FAILURE_KEY, Body=json.dumps(body).encode())

    # WHEN the error notification arrives
    outcome = recorder.handle_message(error())

    # THEN the job is FAILED with the container's code and message, and the reason is kept
    assert outcome.error_code == "ENCRYPTED_DOCUMENT"
    job = aws.job(VL_JOB)
    assert job["status"] == JobStatus.FAILED
    assert job["error"] == {"code": "ENCRYPTED_DOCUMENT", "message": "the PDF needs a password"}
    assert job["failure_uri"] == f"s3://{RESULTS_BUCKET}/{FAILURE_KEY}"
    assert job["failure_reason"].startswith("ClientError")


def test_error_notification_without_a_failure_object_reads_the_reason(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a VL job and an error notification whose failure object is gone, but whose reason
    # quotes the container's JSON error body (tests/events/sns_sagemaker_async_error.json)
    queue_vl_job(aws)

    # WHEN it arrives
    recorder.handle_message(error())

    # THEN the code comes from the quoted body
    assert aws.job(VL_JOB)["error"]["code"] == "CORRUPT_DOCUMENT"


def test_error_notification_with_only_a_plain_reason_is_an_inference_failure(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a VL job whose inference timed out
    queue_vl_job(aws)
    message = error(failureReason="InferenceTimedOut: the invocation exceeded 3600 seconds")

    # WHEN the error notification arrives
    recorder.handle_message(message)

    # THEN the job is FAILED as an inference failure that quotes the reason
    failed = aws.job(VL_JOB)["error"]
    assert failed["code"] == "INFERENCE_FAILED"
    assert "InferenceTimedOut" in failed["message"]


def test_error_after_completion_does_not_regress_the_job(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a completed VL job
    vl_job_with_its_output(aws)
    aws.store.mark_completed(VL_JOB, result_uri="s3://r/result.json", page_count=1, timings_ms={})

    # WHEN an error notification for it arrives out of order
    outcome = recorder.handle_message(error())

    # THEN it stays COMPLETED
    assert outcome.completion is Completion.ALREADY_FINISHED
    assert aws.job(VL_JOB)["status"] == JobStatus.COMPLETED


# -- processor crash (Lambda on-failure destination) ----------------------------------------------
def crash_record(**context: Any) -> str:
    message = sns_message("sns_lambda_destination_failure.json")
    message["requestContext"].update(context)
    return json.dumps(message)


def processing_job(aws: EmulatedAws, attempts: int) -> None:
    aws.queue_job(OCR_JOB, OcrModel.PP_OCRV5, "input/PP-OCRv5/big-scan.pdf")
    for _ in range(attempts):
        aws.store.mark_processing(OCR_JOB)


def test_processor_that_crashed_on_every_attempt_ends_the_job_failed(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a job the processor started three times and that was killed each time
    processing_job(aws, attempts=3)

    # WHEN the on-failure destination record arrives (RetriesExhausted, 3 invokes)
    outcome = recorder.handle_message(crash_record())

    # THEN the job is FAILED PROCESSOR_CRASHED with its attempts and the last error
    assert outcome.error_code == "PROCESSOR_CRASHED"
    job = aws.job(OCR_JOB)
    assert (job["status"], job["attempts"]) == (JobStatus.FAILED, 3)
    assert job["failure_condition"] == "RetriesExhausted"
    assert "all 3 attempts" in job["error"]["message"]
    assert "Runtime.ExitError" in job["error"]["message"]


def test_processor_that_never_started_in_time_counts_the_invokes_as_attempts(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a QUEUED job the processor never got to (throttled until the event aged out)
    processing_job(aws, attempts=0)

    # WHEN the EventAgeExceeded record arrives
    recorder.handle_message(crash_record(condition="EventAgeExceeded", approximateInvokeCount=2))

    # THEN the job is FAILED with the invokes counted as attempts
    job = aws.job(OCR_JOB)
    assert (job["status"], job["attempts"], job["error"]["code"]) == (
        JobStatus.FAILED,
        2,
        "PROCESSOR_CRASHED",
    )
    assert "maximum event age" in job["error"]["message"]


def chunk_crash_record(index: int, first: int, last: int) -> str:
    message = sns_message("sns_lambda_destination_failure.json")
    message["requestPayload"]["chunk"] = {"index": index, "first_page": first, "last_page": last}
    return json.dumps(message)


def fanned_out_job(aws: EmulatedAws, *, chunks: int, counted: int) -> None:
    """A PROCESSING job of `chunks` chunks of 10 pages, the first `counted` of them counted."""
    processing_job(aws, attempts=1)
    aws.store.start_chunks(
        OCR_JOB, pages_total=10 * chunks, chunks_total=chunks, chunk_pages=10, invocation_id="f"
    )
    for index in range(counted):
        aws.store.commit_chunk(OCR_JOB, chunk_index=index, pages=10)


def test_a_chunk_that_crashed_on_every_attempt_fails_the_job_naming_its_pages(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a large document fanned out in chunks, one of which counted already
    fanned_out_job(aws, chunks=3, counted=1)

    # WHEN the on-failure record of chunk 1 (pages 11-20) arrives
    outcome = recorder.handle_message(chunk_crash_record(1, 11, 20))

    # THEN the job is FAILED PROCESSOR_CRASHED, and says which pages
    assert outcome.error_code == "PROCESSOR_CRASHED"
    job = aws.job(OCR_JOB)
    assert job["status"] == JobStatus.FAILED
    assert job["failed_pages"] == "pages 11-20"
    assert "on pages 11-20 on all 3 attempts" in job["error"]["message"]


def test_a_merge_that_crashed_on_every_attempt_says_so(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a fanned-out job whose last chunk counted (so its invocation was the merger)
    fanned_out_job(aws, chunks=2, counted=2)

    # WHEN that chunk's invocation reaches the on-failure destination
    recorder.handle_message(chunk_crash_record(1, 11, 20))

    # THEN the failure names the merge, not the chunk's OCR
    job = aws.job(OCR_JOB)
    assert job["error"]["code"] == "PROCESSOR_CRASHED"
    assert "merging the result (after pages 11-20)" in job["error"]["message"]


def test_crash_record_after_the_job_completed_changes_nothing(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a job the processor completed on its second attempt
    processing_job(aws, attempts=2)
    aws.store.mark_completed(OCR_JOB, result_uri="s3://r/k", page_count=1, timings_ms={})

    # WHEN a stale failure record arrives
    outcome = recorder.handle_message(crash_record())

    # THEN the job stays COMPLETED
    assert outcome.completion is Completion.ALREADY_FINISHED
    assert aws.job(OCR_JOB)["status"] == JobStatus.COMPLETED


# -- messages that match no job -----------------------------------------------------------------
# -- SageMaker chunks of a large document --------------------------------------------------------
def chunked_vl_job(aws: EmulatedAws, *, pages: int = 4, chunk_pages: int = 2) -> ChunkPlan:
    """A VL job the processor split into chunks: record totals and work/<job>/plan.json."""
    queue_vl_job(aws)
    chunks = plan_chunks(pages, chunk_pages)
    aws.store.start_chunks(
        VL_JOB,
        pages_total=pages,
        chunks_total=len(chunks),
        chunk_pages=chunk_pages,
        invocation_id="processor-plan",
    )
    plan = ChunkPlan(
        job_id=VL_JOB,
        model=OcrModel.PADDLEOCR_VL.value,
        lang="en",
        source=endpoint_result().source.model_copy(update={"page_count": pages}),
        cache_key=None,
        chunks=chunks,
    )
    aws.s3.put_object(Bucket=RESULTS_BUCKET, Key=plan_key(VL_JOB), Body=plan.model_dump_json())
    return plan


def chunk_notification(
    aws: EmulatedAws, plan: ChunkPlan, index: int, *, failed: bool = False
) -> str:
    """SageMaker's notification for one chunk's inference, its output written when it
    succeeded; the input location is the chunk's manifest."""
    chunk = plan.chunks[index]
    job = DispatchedJob(
        job_id=VL_JOB,
        bucket=INPUT_BUCKET,
        key="input/PaddleOCR-VL/report.pdf",
        model=OcrModel.PADDLEOCR_VL,
        lang="en",
        chunk=chunk,
    )
    name = inference_id(job)
    message = sns_message(
        "sns_sagemaker_async_error.json" if failed else "sns_sagemaker_async_success.json"
    )
    message["inferenceId"] = name
    message["requestParameters"]["inputLocation"] = f"s3://{RESULTS_BUCKET}/{manifest_key(job)}"
    if failed:
        message["responseParameters"]["failureLocation"] = (
            f"s3://{RESULTS_BUCKET}/{names.VL_FAILURE_PREFIX}{name}-error.out"
        )
        return json.dumps(message)
    output_key = f"{names.VL_OUTPUT_PREFIX}{name}.out"
    message["responseParameters"]["outputLocation"] = f"s3://{RESULTS_BUCKET}/{output_key}"
    template = endpoint_result().pages[0]
    pages = [
        template.model_copy(
            update={
                "page": n,
                "lines": [template.lines[0].model_copy(update={"text": f"Page {n}"})],
            }
        )
        for n in range(chunk.first_page, chunk.last_page + 1)
    ]
    output = endpoint_result().model_copy(update={"pages": pages})
    aws.s3.put_object(Bucket=RESULTS_BUCKET, Key=output_key, Body=output.model_dump_json())
    return json.dumps(message)


def test_a_chunks_success_hands_its_pages_to_the_processor(
    aws: EmulatedAws, recorder: CompletionRecorder, processor_runs: RecordingProcessorInvoker
) -> None:
    # GIVEN a 4-page VL document submitted as 2 chunks of 2 pages
    plan = chunked_vl_job(aws)

    # WHEN the second chunk's output arrives
    outcome = recorder.handle_message(chunk_notification(aws, plan, 1))

    # THEN the processor is asked to commit that chunk (counting and merging are its own)
    assert outcome.completion is Completion.HANDED_OVER
    [event] = processor_runs.events
    assert (event.task, event.chunk) == (ProcessorTask.ENDPOINT_RESULT, plan.chunks[1])
    assert event.endpoint_result is not None
    assert event.endpoint_result.output_location is not None
    assert event.endpoint_result.output_location.endswith("-c00001.out")
    assert aws.job(VL_JOB)["chunks_done"] == 0


def test_a_failed_chunk_fails_the_job_with_its_error_naming_its_pages(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a chunked VL job whose second chunk the container refused as damaged
    plan = chunked_vl_job(aws)
    failure = {"error": {"code": "CORRUPT_DOCUMENT", "message": "page 3 cannot be read"}}
    message = chunk_notification(aws, plan, 1, failed=True)
    failure_uri = json.loads(message)["responseParameters"]["failureLocation"]
    aws.s3.put_object(
        Bucket=RESULTS_BUCKET,
        Key=failure_uri.removeprefix(f"s3://{RESULTS_BUCKET}/"),
        Body=json.dumps(failure),
    )

    # WHEN its error notification arrives, and then the other chunk's success
    outcome = recorder.handle_message(message)
    late = recorder.handle_message(chunk_notification(aws, plan, 0))

    # THEN the job is FAILED with the container's code and the chunk's pages; nothing revives it
    assert (outcome.completion, outcome.error_code) == (Completion.FAILED, "CORRUPT_DOCUMENT")
    job = aws.job(VL_JOB)
    assert job["status"] == JobStatus.FAILED
    assert job["failed_pages"] == "pages 3-4"
    assert late.completion is Completion.ALREADY_FINISHED


def test_notification_for_an_unknown_job_is_ignored(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN no job vl-job-0001
    # WHEN its success notification arrives
    outcome = recorder.handle_message(success())

    # THEN nothing is created
    assert outcome.completion is Completion.UNKNOWN_JOB
    assert aws.store.list_all() == []


@pytest.mark.parametrize(
    "message",
    [
        pytest.param("not json", id="text"),
        pytest.param(json.dumps({"hello": "world"}), id="other-json"),
        pytest.param(
            json.dumps({"requestContext": {"condition": "RetriesExhausted"}}), id="no-job"
        ),
    ],
)
def test_unrecognized_message_is_ignored(
    aws: EmulatedAws, recorder: CompletionRecorder, message: str
) -> None:
    # GIVEN a message of no known shape
    # WHEN it arrives
    outcome = recorder.handle_message(message)

    # THEN it is acknowledged and nothing changes
    assert outcome.completion is Completion.IGNORED
    assert aws.store.list_all() == []
