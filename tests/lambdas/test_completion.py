"""Completion handler: SageMaker success and error notifications, processor crash records."""

from __future__ import annotations

import json
from typing import Any

import pytest

from idp import names
from idp.chunks import ChunkPlan, plan_chunks, plan_key
from idp.errors import CorruptDocument
from idp.jobs import DispatchedJob
from idp.names import JobStatus, OcrModel
from idp.results import OcrResult
from idp.vl_submit import inference_id, manifest_key
from lambdas.completion.recorder import Completion, CompletionRecorder
from tests.lambdas.support import (
    FAILURE_KEY,
    INPUT_BUCKET,
    OCR_JOB,
    OUTPUT_KEY,
    RESULTS_BUCKET,
    VL_JOB,
    EmulatedAws,
    Faults,
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


# -- SageMaker success --------------------------------------------------------------------------
def test_success_writes_the_canonical_result_and_completes_the_job(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a dispatched VL job whose output the endpoint has written
    vl_job_with_its_output(aws)

    # WHEN the success notification arrives
    outcome = recorder.handle_message(success())

    # THEN result.json and result.md are in the results bucket and the job is COMPLETED
    assert outcome.completion is Completion.COMPLETED
    job = aws.job(VL_JOB)
    result_key = f"{names.RESULTS_PREFIX}{VL_JOB}/{names.RESULT_JSON}"
    assert job["status"] == JobStatus.COMPLETED
    assert job["result_uri"] == f"s3://{RESULTS_BUCKET}/{result_key}"
    assert job["page_count"] == 1
    assert job["engine"]["name"] == "paddleocr-vl"
    result = OcrResult.model_validate_json(aws.object_text(RESULTS_BUCKET, result_key))
    assert (result.job_id, result.model, result.text) == (
        VL_JOB,
        "PaddleOCR-VL",
        "Quarterly report",
    )
    markdown_key = f"{names.RESULTS_PREFIX}{VL_JOB}/{names.RESULT_MD}"
    assert aws.object_text(RESULTS_BUCKET, markdown_key) == "# Quarterly report"


def test_success_asks_the_processor_for_result_pdf_before_completing(
    aws: EmulatedAws, recorder: CompletionRecorder, processor_runs: RecordingProcessorInvoker
) -> None:
    # GIVEN a VL job (searchable PDF on, the default) whose output the endpoint has written
    vl_job_with_its_output(aws)

    # WHEN the success notification arrives
    recorder.handle_message(success())

    # THEN the processor (which has the PDF libraries) is asked to write the job's result.pdf
    # from its input, once
    [event] = processor_runs.events
    assert (event.job_id, event.task, event.key) == (
        VL_JOB,
        "searchable_pdf",
        "input/PaddleOCR-VL/report.pdf",
    )
    assert aws.job(VL_JOB)["status"] == JobStatus.COMPLETED


def test_success_records_queue_and_inference_time(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a VL job and an output whose container spent 5.3 s of the endpoint's 132 s
    vl_job_with_its_output(aws)

    # WHEN the success notification (received 10:01:00, finished 10:03:12) arrives
    recorder.handle_message(success())

    # THEN the timings say where the time went, next to the container's own stages
    timings = aws.job(VL_JOB)["timings_ms"]
    assert timings["inference"] == 5300.0
    assert timings["endpoint_queue"] == 132_000.0 - 5300.0
    assert timings["ocr"] == 5200.0
    assert {"dispatch", "end_to_end"} <= timings.keys()


def test_success_for_a_job_never_marked_processing_still_completes(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a QUEUED job whose dispatch was never confirmed (the notification overtook it)
    vl_job_with_its_output(aws, dispatched=False)

    # WHEN the success notification arrives
    outcome = recorder.handle_message(success())

    # THEN the job completes
    assert outcome.completion is Completion.COMPLETED
    assert aws.job(VL_JOB)["status"] == JobStatus.COMPLETED


def test_a_duplicate_success_changes_nothing(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a job completed by a first success notification
    vl_job_with_its_output(aws)
    recorder.handle_message(success())
    completed = aws.job(VL_JOB)

    # WHEN SNS delivers the same notification again
    outcome = recorder.handle_message(success())

    # THEN nothing changes
    assert outcome.completion is Completion.ALREADY_FINISHED
    assert aws.job(VL_JOB) == completed


def test_a_success_after_the_job_failed_does_not_revive_it(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a job that already ended FAILED
    queue_vl_job(aws)
    aws.store.mark_failed(VL_JOB, CorruptDocument("the PDF is truncated"))
    put_output(aws, endpoint_result().model_dump_json())

    # WHEN a late success notification arrives
    outcome = recorder.handle_message(success())

    # THEN the job stays FAILED and no result is published
    assert outcome.completion is Completion.ALREADY_FINISHED
    assert aws.job(VL_JOB)["status"] == JobStatus.FAILED
    listed = aws.s3.list_objects_v2(Bucket=RESULTS_BUCKET, Prefix=names.RESULTS_PREFIX)
    assert listed.get("KeyCount") == 0


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
def test_success_with_an_unusable_output_fails_the_job(
    aws: EmulatedAws, recorder: CompletionRecorder, output: str | None, code: str
) -> None:
    # GIVEN a VL job whose output is an error body, garbage, or missing
    queue_vl_job(aws)
    if output is not None:
        put_output(aws, output)

    # WHEN the success notification arrives
    outcome = recorder.handle_message(success())

    # THEN the job is FAILED with the matching code
    assert outcome.completion is Completion.FAILED
    job = aws.job(VL_JOB)
    assert (job["status"], job["error"]["code"]) == (JobStatus.FAILED, code)


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
    recorder.handle_message(success())

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


def test_a_chunk_that_crashed_on_every_attempt_fails_the_job_naming_its_pages(
    aws: EmulatedAws, recorder: CompletionRecorder
) -> None:
    # GIVEN a large document fanned out in chunks, one of which counted already
    processing_job(aws, attempts=1)
    aws.store.start_chunks(
        OCR_JOB, pages_total=30, chunks_total=3, chunk_pages=10, invocation_id="fan-out"
    )
    aws.store.commit_chunk(OCR_JOB, chunk_index=0, pages=10)

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
    processing_job(aws, attempts=1)
    aws.store.start_chunks(
        OCR_JOB, pages_total=20, chunks_total=2, chunk_pages=10, invocation_id="fan-out"
    )
    aws.store.commit_chunk(OCR_JOB, chunk_index=0, pages=10)
    aws.store.commit_chunk(OCR_JOB, chunk_index=1, pages=10)

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


def test_chunk_outputs_count_once_and_the_last_one_merges_them_in_page_order(
    aws: EmulatedAws, recorder: CompletionRecorder, processor_runs: RecordingProcessorInvoker
) -> None:
    # GIVEN a 4-page VL document submitted as 2 chunks of 2 pages
    plan = chunked_vl_job(aws)

    # WHEN the second chunk's output arrives twice (SNS may duplicate), then the first chunk's
    first = recorder.handle_message(chunk_notification(aws, plan, 1))
    again = recorder.handle_message(chunk_notification(aws, plan, 1))
    counted_once = aws.job(VL_JOB)
    last = recorder.handle_message(chunk_notification(aws, plan, 0))

    # THEN the duplicate counted nothing, the last chunk completed the job, pages are in order
    assert (first.completion, again.completion) == (Completion.CHUNK_COUNTED,) * 2
    assert (counted_once["chunks_done"], counted_once["pages_done"]) == (1, 2)
    assert last.completion is Completion.COMPLETED
    job = aws.job(VL_JOB)
    assert (job["status"], job["page_count"], job["chunks_done"]) == (JobStatus.COMPLETED, 4, 2)
    result = OcrResult.model_validate_json(
        aws.object_text(RESULTS_BUCKET, f"{names.RESULTS_PREFIX}{VL_JOB}/{names.RESULT_JSON}")
    )
    assert [page.page for page in result.pages] == [1, 2, 3, 4]
    assert result.text == "Page 1\n\nPage 2\n\nPage 3\n\nPage 4"
    assert result.engine.name == "paddleocr-vl"
    assert [event.task for event in processor_runs.events] == ["searchable_pdf"]
    # AND its partials and plan are gone
    listed = aws.s3.list_objects_v2(Bucket=RESULTS_BUCKET, Prefix=f"{names.WORK_PREFIX}{VL_JOB}/")
    assert listed.get("KeyCount") == 0


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


def test_a_merge_that_crashed_is_redone_by_the_retry_of_the_same_event(
    aws: EmulatedAws, recorder: CompletionRecorder, faults: Faults
) -> None:
    # GIVEN a chunked VL job with one chunk counted, and S3 failing the merged result's upload
    plan = chunked_vl_job(aws)
    recorder.handle_message(chunk_notification(aws, plan, 0), invocation_id="delivery-0")
    last = chunk_notification(aws, plan, 1)
    faults.fail_calls(aws.s3, "PutObject", code="InternalError", skip=1, times=1)

    # WHEN the last chunk's delivery crashes while merging, another delivery of it arrives while
    # the merge is leased, and Lambda retries the crashed event (same request id)
    with pytest.raises(Exception, match="InternalError"):
        recorder.handle_message(last, invocation_id="delivery-1")
    crashed = aws.job(VL_JOB)
    other = recorder.handle_message(last, invocation_id="delivery-2")
    retried = recorder.handle_message(last, invocation_id="delivery-1")

    # THEN the chunk counted once, the other delivery left the merge to its holder, and the
    # retry merged and completed the job
    assert (crashed["status"], crashed["chunks_done"]) == (JobStatus.QUEUED, 2)
    assert other.completion is Completion.CHUNK_COUNTED
    assert retried.completion is Completion.COMPLETED
    assert aws.job(VL_JOB)["page_count"] == 4


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
