"""Invoker: admission, routing per model, user errors, duplicates and transient faults (moto)."""

from __future__ import annotations

import dataclasses
import io
import json
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest
from aws_lambda_powertools import Logger

from idp.aws.alarms import AlarmRearm
from idp.contract import names
from idp.contract.errors import TransientError
from idp.contract.job_record import JobRecord
from idp.contract.jobs import DispatchedJob, JobOptions
from idp.contract.names import JobStatus
from idp.contract.topology import DISPATCH_LEASE_SECONDS
from idp.jobstore.store import JobStore
from lambdas.invoker.handler import process_batch
from lambdas.invoker.routing import Disposition, JobRouter
from tests.lambdas.support import (
    INPUT_BUCKET,
    JOBS_TABLE,
    PROCESSOR_FUNCTION,
    RESULTS_BUCKET,
    SCALE_IN_ALARM,
    VL_ENDPOINT,
    EmulatedAws,
    Faults,
    RecordingProcessorInvoker,
    RouterFactory,
    alarm_state,
    load_event,
    s3_event_body,
    sqs_event,
)

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient


def direct(key: str, **fields: Any) -> str:
    return json.dumps({"bucket": INPUT_BUCKET, "key": key, **fields})


def route_vl_job(aws: EmulatedAws, router: JobRouter, *, model: str = "PaddleOCR-VL") -> JobRecord:
    """Upload scan.pdf and route a `model` job for it; returns the job's record."""
    aws.put_input("scan.pdf")
    [outcome] = router.handle_message(direct("scan.pdf", model=model))
    return aws.job(outcome.job_id)


def failed_message_ids(response: Any) -> list[str]:
    return [item["itemIdentifier"] for item in response["batchItemFailures"]]


# -- routing ------------------------------------------------------------------------------------
def test_s3_event_for_pp_ocrv5_queues_the_job_and_starts_the_processor(
    aws: EmulatedAws, make_router: RouterFactory, processor_runs: RecordingProcessorInvoker
) -> None:
    # GIVEN an upload whose key has spaces and non-ASCII characters (URL-encoded in the event)
    key = "input/PP-OCRv5/scans/Invoice 2026 été.pdf"
    version = aws.put_input(key)
    body = s3_event_body("input/PP-OCRv5/scans/Invoice+2026+%C3%A9t%C3%A9.pdf", version=version)

    # WHEN the invoker handles the notification
    [outcome] = make_router().handle_message(body)

    # THEN the job is QUEUED for PP-OCRv5 on the decoded key and the processor got one event
    job = aws.job(outcome.job_id)
    assert job["owner"]
    assert outcome.disposition is Disposition.DISPATCHED
    assert job["status"] == JobStatus.QUEUED
    assert (job["model"], job["lang"], job["backend"]) == ("PP-OCRv5", "en", "lambda")
    assert job["input_uri"] == f"s3://{INPUT_BUCKET}/{key}"
    assert job["dispatch_target"] == f"lambda:{PROCESSOR_FUNCTION}"
    assert processor_runs.events == [
        DispatchedJob(
            job_id=outcome.job_id,
            bucket=INPUT_BUCKET,
            key=key,
            model=names.OcrModel.PP_OCRV5,
            lang="en",
            owner=job["owner"],  # the uploader the event names, so its results go under it
        )
    ]


def test_direct_message_for_pp_structurev3_uses_its_job_id_and_language(
    aws: EmulatedAws, make_router: RouterFactory, processor_runs: RecordingProcessorInvoker
) -> None:
    # GIVEN the sample direct job message and its input object
    aws.put_input("uploads/contract.pdf")
    body = load_event("sqs_direct_job_message.json")["Records"][0]["body"]

    # WHEN the invoker handles it
    [outcome] = make_router().handle_message(body)

    # THEN the job carries the caller's id and language and goes to the processor
    assert outcome.job_id == "contract-2026-001"
    job = aws.job("contract-2026-001")
    assert (job["status"], job["model"], job["lang"]) == ("QUEUED", "PP-StructureV3", "fr")
    assert processor_runs.runs_of("contract-2026-001") == 1


def test_language_comes_from_the_objects_metadata_when_the_message_has_none(
    aws: EmulatedAws, make_router: RouterFactory, processor_runs: RecordingProcessorInvoker
) -> None:
    # GIVEN an upload tagged x-amz-meta-lang: japan
    version = aws.put_input("input/ocr/receipt.png", lang="japan")

    # WHEN its S3 event is handled
    [outcome] = make_router().handle_message(
        s3_event_body("input/ocr/receipt.png", version=version)
    )

    # THEN the job runs in Japanese
    assert aws.job(outcome.job_id)["lang"] == "japan"
    assert processor_runs.events[0].lang == "japan"


def test_vl_job_scales_the_endpoint_out_from_zero_and_goes_to_the_processor_to_be_planned(
    aws: EmulatedAws, make_router: RouterFactory, processor_runs: RecordingProcessorInvoker
) -> None:
    # GIVEN the VL endpoint scaled in to zero instances
    aws.set_vl_instances(0)

    # WHEN a PaddleOCR-VL job arrives
    job = route_vl_job(aws, make_router())

    # THEN the endpoint wants one instance, and the processor (which can count the document's
    # pages) gets the job to submit it to the endpoint, whole or in chunks
    assert aws.vl_instances() == 1
    assert job["status"] == JobStatus.QUEUED
    assert job["backend"] == "sagemaker"
    assert job["endpoint_scale_out"] == "changed"
    assert job["dispatch_target"] == processor_runs.target
    assert job["vl_endpoint"] == f"sagemaker:{VL_ENDPOINT}"
    [event] = processor_runs.events
    assert (event.job_id, event.key, event.model) == (
        job["job_id"],
        "scan.pdf",
        names.OcrModel.PADDLEOCR_VL,
    )
    listed = aws.s3.list_objects_v2(Bucket=RESULTS_BUCKET, Prefix=names.VL_MANIFEST_PREFIX)
    assert listed.get("KeyCount") == 0


def test_scaling_out_from_zero_re_arms_the_scale_in_alarm(
    aws: EmulatedAws, make_router: RouterFactory, scale_in_alarm: CloudWatchClient
) -> None:
    # GIVEN an endpoint scaled in to zero, its idle alarm left in ALARM by that scale-in
    cloudwatch = scale_in_alarm
    aws.set_vl_instances(0)
    router = make_router(scale_in_alarm=AlarmRearm(cloudwatch, alarm_name=SCALE_IN_ALARM))

    # WHEN a PaddleOCR-VL job scales it out to one instance
    job = route_vl_job(aws, router)

    # THEN the alarm is OK again: once the instance is idle, its next breach notifies
    assert job["endpoint_scale_out"] == "changed"
    assert aws.vl_instances() == 1
    assert alarm_state(cloudwatch, SCALE_IN_ALARM) == "OK"


def test_a_failed_re_arm_leaves_the_endpoint_at_zero_for_the_retry(
    aws: EmulatedAws,
    make_router: RouterFactory,
    scale_in_alarm: CloudWatchClient,
    faults: Faults,
) -> None:
    # GIVEN an endpoint at zero whose alarm cannot be set right now
    cloudwatch = scale_in_alarm
    aws.set_vl_instances(0)
    aws.put_input("scan.pdf")
    faults.fail_calls(cloudwatch, "SetAlarmState", code="ThrottlingException", times=1)
    router = make_router(scale_in_alarm=AlarmRearm(cloudwatch, alarm_name=SCALE_IN_ALARM))

    # WHEN the job is routed, fails, and its message is delivered again
    with pytest.raises(TransientError, match="SetAlarmState"):
        router.handle_message(direct("scan.pdf", model="PaddleOCR-VL"))
    stayed_at = aws.vl_instances()
    [outcome] = router.handle_message(direct("scan.pdf", model="PaddleOCR-VL"))

    # THEN nothing was scaled without the re-arm; the retry re-arms and scales out
    assert stayed_at == 0
    assert aws.job(outcome.job_id)["endpoint_scale_out"] == "changed"
    assert aws.vl_instances() == 1
    assert alarm_state(cloudwatch, SCALE_IN_ALARM) == "OK"


def test_vl_job_leaves_an_endpoint_with_one_instance_alone(
    aws: EmulatedAws, make_router: RouterFactory
) -> None:
    # GIVEN the VL endpoint already at one instance
    aws.set_vl_instances(1)

    # WHEN a PaddleOCR-VL job arrives
    job = route_vl_job(aws, make_router(), model="vl")

    # THEN no scaling was requested and the job still went on to be planned
    assert aws.vl_instances() == 1
    assert job["endpoint_scale_out"] == "already"
    assert "dispatch_confirmed_at" in job


def test_vl_job_while_the_endpoint_is_updating_is_submitted_without_a_scaling_call(
    aws: EmulatedAws, make_router: RouterFactory, faults: Faults
) -> None:
    # GIVEN an endpoint at zero that is in the middle of an update
    aws.set_vl_instances(0)
    faults.force_endpoint_status(VL_ENDPOINT, "Updating")

    # WHEN a PaddleOCR-VL job arrives
    job = route_vl_job(aws, make_router())

    # THEN the job goes on to be planned and the capacity is left to the running update
    assert job["endpoint_scale_out"] == "updating"
    assert "dispatch_confirmed_at" in job
    assert aws.vl_instances() == 0


def test_s3_test_event_is_acknowledged_without_a_job(
    aws: EmulatedAws, make_router: RouterFactory, lambda_context: Any
) -> None:
    # GIVEN the s3:TestEvent S3 sends when notifications are configured
    event = load_event("sqs_s3_test_event.json")

    # WHEN the batch is processed
    response = process_batch(event, lambda_context, make_router())

    # THEN the message is consumed and no job exists
    assert response["batchItemFailures"] == []
    assert aws.store.list_all() == []


# -- user errors: FAILED at once, never retried -------------------------------------------------
def user_error(
    code: str, case: str, *, key: str | None = None, body: str | None = None, **settings: Any
) -> Any:
    """A case of a user error: an S3 event for `key` or a direct `body`, router `settings`."""
    return pytest.param(key, body, settings, code, id=case)


USER_ERRORS = [
    user_error("UNSUPPORTED_MODEL", "unknown-model-in-key", key="input/PP-OCRv9/doc.pdf"),
    user_error("UNSUPPORTED_MODEL", "direct", body=direct("doc.pdf", model="tesseract")),
    user_error(
        "UNSUPPORTED_MODEL",
        "vl-disabled",
        body=direct("doc.pdf", model="PaddleOCR-VL"),
        vl_enabled=False,
    ),
    user_error(
        "UNSUPPORTED_LANGUAGE",
        "unknown-language",
        body=direct("doc.pdf", model="ocr", lang="klingon"),
    ),
    user_error("INPUT_NOT_FOUND", "input-not-found", body=direct("missing.pdf", model="ocr")),
    user_error("EMPTY_INPUT", "empty-input", body=direct("empty.pdf", model="ocr")),
    user_error(
        "INPUT_TOO_LARGE", "too-large", body=direct("doc.pdf", model="ocr"), max_input_bytes=4
    ),
    user_error(
        "INVALID_MESSAGE",
        "bad-options",
        body=direct("doc.pdf", model="ocr", options={"pdf_scale": 100}),
    ),
    user_error(
        "INVALID_MESSAGE", "unknown-field", body=direct("doc.pdf", model="ocr", colour="blue")
    ),
    user_error("INVALID_MESSAGE", "key-without-model-folder", key="input/doc.pdf"),
]


@pytest.mark.parametrize(("event_key", "body", "settings", "code"), USER_ERRORS)
def test_user_error_ends_the_job_failed_without_a_retry(
    aws: EmulatedAws,
    make_router: RouterFactory,
    processor_runs: RecordingProcessorInvoker,
    lambda_context: Any,
    event_key: str | None,
    body: str | None,
    settings: dict[str, Any],
    code: str,
) -> None:
    # GIVEN the inputs a user might send (an empty object, a 13-byte one) and a bad request
    aws.put_input("doc.pdf")
    aws.put_input("empty.pdf", body=b"")
    message = body if body is not None else s3_event_body(str(event_key))

    # WHEN the batch is processed
    response = process_batch(sqs_event(message), lambda_context, make_router(**settings))

    # THEN the message is not retried and the job is FAILED with the stable code
    assert response["batchItemFailures"] == []
    [job] = aws.store.list_all()
    assert job["status"] == JobStatus.FAILED
    assert job["error"]["code"] == code
    assert job["error"]["message"]
    assert processor_runs.events == []


def test_rejected_job_keeps_what_the_user_sent_and_a_redelivery_changes_nothing(
    aws: EmulatedAws, make_router: RouterFactory
) -> None:
    # GIVEN a message asking for an unknown language
    message = direct("doc.pdf", model="ocr", lang="klingon", job_id="my-job-7")
    aws.put_input("doc.pdf")
    router = make_router()

    # WHEN it is delivered twice
    first = router.handle_message(message)
    second = router.handle_message(message)

    # THEN one FAILED record under the caller's id shows the request as sent
    assert [o.job_id for o in first + second] == ["my-job-7", "my-job-7"]
    [job] = aws.store.list_all()
    assert (job["job_id"], job["lang"], job["model"]) == ("my-job-7", "klingon", "PP-OCRv5")
    assert job["error"]["code"] == "UNSUPPORTED_LANGUAGE"


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("{not json", id="malformed-json"),
        pytest.param(json.dumps({"model": "ocr", "lang": "en"}), id="missing-bucket-and-key"),
        pytest.param(json.dumps(["a", "list"]), id="not-an-object"),
    ],
)
def test_message_that_names_no_job_is_left_for_the_dead_letter_queue(
    aws: EmulatedAws, make_router: RouterFactory, lambda_context: Any, body: str
) -> None:
    # GIVEN a message from which no job can be named
    # WHEN the batch is processed
    response = process_batch(sqs_event(body), lambda_context, make_router())

    # THEN the record is a batch item failure (SQS retries it, then dead-letters it)
    assert failed_message_ids(response) == ["message-0"]
    assert aws.store.list_all() == []


def test_a_bad_message_does_not_hold_back_the_good_one_in_the_same_batch(
    aws: EmulatedAws, make_router: RouterFactory, lambda_context: Any
) -> None:
    # GIVEN a batch with a malformed message and a good one
    aws.put_input("doc.pdf")
    event = sqs_event("{not json", direct("doc.pdf", model="ocr"))

    # WHEN it is processed
    response = process_batch(event, lambda_context, make_router())

    # THEN only the malformed one is retried and the good job is dispatched
    assert failed_message_ids(response) == ["message-0"]
    [job] = aws.store.list_all()
    assert job["status"] == JobStatus.QUEUED
    assert "dispatch_confirmed_at" in job


# -- duplicates ---------------------------------------------------------------------------------
def test_a_redelivered_message_makes_one_job_and_one_run(
    aws: EmulatedAws, make_router: RouterFactory, processor_runs: RecordingProcessorInvoker
) -> None:
    # GIVEN an S3 event that SQS delivers twice (e.g. after a visibility timeout)
    version = aws.put_input("input/ocr/a.png")
    body = s3_event_body("input/ocr/a.png", version=version)
    router = make_router()

    # WHEN both deliveries are handled
    [first] = router.handle_message(body)
    [second] = router.handle_message(body)

    # THEN there is one job and the processor ran once
    assert first.job_id == second.job_id
    assert (first.disposition, second.disposition) == (
        Disposition.DISPATCHED,
        Disposition.DUPLICATE,
    )
    assert len(aws.store.list_all()) == 1
    assert processor_runs.runs_of(first.job_id) == 1


def test_the_same_s3_event_twice_in_one_batch_makes_one_run(
    aws: EmulatedAws,
    make_router: RouterFactory,
    processor_runs: RecordingProcessorInvoker,
    lambda_context: Any,
) -> None:
    # GIVEN a batch holding the same S3 notification twice
    version = aws.put_input("input/structure/b.pdf")
    body = s3_event_body("input/structure/b.pdf", version=version)

    # WHEN it is processed
    response = process_batch(sqs_event(body, body), lambda_context, make_router())

    # THEN both records succeed, with one job and one run
    assert response["batchItemFailures"] == []
    [job] = aws.store.list_all()
    assert processor_runs.runs_of(job["job_id"]) == 1


def test_concurrent_deliveries_of_one_message_make_one_run(
    aws: EmulatedAws,
    processor_runs: RecordingProcessorInvoker,
    make_router: RouterFactory,
    faults: Faults,
) -> None:
    # GIVEN six invokers, each with its own table handle, receiving the same message at once
    faults.serialize_calls(aws.table.meta.client)  # DynamoDB's per-request atomicity
    aws.put_input("doc.pdf")
    message = direct("doc.pdf", model="ocr")
    template = make_router(vl_enabled=False, dispatch_lease_seconds=DISPATCH_LEASE_SECONDS)
    routers = [
        dataclasses.replace(template, store=JobStore(aws.dynamodb.Table(JOBS_TABLE)))
        for _ in range(6)
    ]
    start = threading.Barrier(len(routers))
    dispositions: list[Disposition] = []

    def deliver(router: JobRouter) -> None:
        start.wait()
        dispositions.extend(outcome.disposition for outcome in router.handle_message(message))

    # WHEN they all handle it concurrently
    threads = [threading.Thread(target=deliver, args=(router,)) for router in routers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    # THEN exactly one dispatched it and the processor ran once
    assert sorted(dispositions).count(Disposition.DISPATCHED) == 1
    assert len(dispositions) == 6
    [job] = aws.store.list_all()
    assert processor_runs.runs_of(job["job_id"]) == 1


def test_an_explicit_job_id_reused_for_another_input_does_not_run(
    aws: EmulatedAws, make_router: RouterFactory, processor_runs: RecordingProcessorInvoker
) -> None:
    # GIVEN a job submitted under the caller's id whose first dispatch was throttled
    aws.put_input("a.pdf")
    aws.put_input("b.pdf")
    router = make_router()
    aws.queue_job(
        "invoice-1", names.OcrModel.PP_OCRV5, "a.pdf", options=JobOptions().model_dump(mode="json")
    )

    # WHEN another message reuses that id for a different file
    [outcome] = router.handle_message(direct("b.pdf", model="ocr", job_id="invoice-1"))

    # THEN it is ignored: nothing runs under the first job's record
    assert outcome.disposition is Disposition.CONFLICT
    assert processor_runs.events == []
    assert aws.job("invoice-1")["input_key"] == "a.pdf"

    # WHEN the original message is redelivered
    [retry] = router.handle_message(direct("a.pdf", model="ocr", job_id="invoice-1"))

    # THEN it is dispatched
    assert retry.disposition is Disposition.DISPATCHED
    assert processor_runs.events[0].key == "a.pdf"


def test_a_confirmed_dispatch_is_never_repeated_even_after_its_lease(
    aws: EmulatedAws, make_router: RouterFactory, processor_runs: RecordingProcessorInvoker
) -> None:
    # GIVEN a job dispatched under a lease that has already run out
    aws.put_input("doc.pdf")
    router = make_router(dispatch_lease_seconds=0)
    [first] = router.handle_message(direct("doc.pdf", model="ocr"))
    time.sleep(0.01)

    # WHEN its message is delivered again
    [second] = router.handle_message(direct("doc.pdf", model="ocr"))

    # THEN it is a duplicate: one run
    assert second.disposition is Disposition.DUPLICATE
    assert processor_runs.runs_of(first.job_id) == 1


# -- transient faults: retried through SQS, never lost ------------------------------------------
def test_throttled_processor_invoke_is_retried_through_sqs_and_then_dispatched(
    aws: EmulatedAws,
    make_router: RouterFactory,
    processor_runs: RecordingProcessorInvoker,
    lambda_context: Any,
    faults: Faults,
) -> None:
    # GIVEN Lambda throttles the next async invoke
    aws.put_input("doc.pdf")
    faults.fail_calls(aws.lambda_client, "Invoke", code="TooManyRequestsException", status=429)
    router = make_router()
    event = sqs_event(direct("doc.pdf", model="ocr"))

    # WHEN the message is processed
    response = process_batch(event, lambda_context, router)

    # THEN it is a batch item failure and the job waits QUEUED with its claim given back
    assert failed_message_ids(response) == ["message-0"]
    [job] = aws.store.list_all()
    assert job["status"] == JobStatus.QUEUED
    assert "dispatched_at" not in job
    assert "TooManyRequestsException" in job["last_dispatch_error"]
    assert processor_runs.events == []

    # WHEN SQS redelivers it
    retry = process_batch(
        sqs_event(direct("doc.pdf", model="ocr"), receive_count=2), lambda_context, router
    )

    # THEN the job is dispatched, once
    assert retry["batchItemFailures"] == []
    assert processor_runs.runs_of(job["job_id"]) == 1
    assert "dispatch_confirmed_at" in aws.job(job["job_id"])


@pytest.mark.parametrize(
    ("client_name", "operation", "code", "message"),
    [
        pytest.param(
            "sagemaker",
            "UpdateEndpointWeightsAndCapacities",
            "ValidationException",
            "Cannot update in-progress endpoint",
            id="endpoint-updating",
        ),
        pytest.param(
            "sagemaker",
            "DescribeEndpoint",
            "ThrottlingException",
            "Rate exceeded",
            id="describe-throttled",
        ),
    ],
)
def test_transient_vl_fault_is_retried_and_the_job_is_not_lost(
    aws: EmulatedAws,
    make_router: RouterFactory,
    lambda_context: Any,
    faults: Faults,
    client_name: str,
    operation: str,
    code: str,
    message: str,
) -> None:
    # GIVEN a VL endpoint at zero and one AWS call that fails transiently once
    aws.set_vl_instances(0)
    aws.put_input("scan.pdf")
    faults.fail_calls(getattr(aws, client_name), operation, code=code, message=message)
    router = make_router()
    body = direct("scan.pdf", model="PaddleOCR-VL")

    # WHEN the message is processed, then redelivered
    first = process_batch(sqs_event(body), lambda_context, router)
    [waiting] = aws.store.list_all()
    second = process_batch(sqs_event(body, receive_count=2), lambda_context, router)

    # THEN the first attempt is retried with the job still QUEUED, and the retry dispatches it
    assert failed_message_ids(first) == ["message-0"]
    assert waiting["status"] == JobStatus.QUEUED
    assert code in waiting["last_dispatch_error"]
    assert second["batchItemFailures"] == []
    assert "dispatch_confirmed_at" in aws.job(waiting["job_id"])
    assert aws.vl_instances() == 1


def test_lost_claim_release_expires_so_the_retry_still_dispatches(
    aws: EmulatedAws,
    make_router: RouterFactory,
    processor_runs: RecordingProcessorInvoker,
    lambda_context: Any,
    faults: Faults,
) -> None:
    # GIVEN the invoke is throttled and then the table rejects the claim's release as well
    aws.put_input("doc.pdf")
    faults.fail_calls(aws.lambda_client, "Invoke")
    faults.fail_calls(
        aws.table.meta.client, "UpdateItem", code="ProvisionedThroughputExceededException", skip=1
    )  # the claim passes, the release fails
    router = make_router(dispatch_lease_seconds=0)
    body = direct("doc.pdf", model="ocr")

    # WHEN the message fails, its claim lease runs out and SQS redelivers it
    first = process_batch(sqs_event(body), lambda_context, router)
    time.sleep(0.01)
    second = process_batch(sqs_event(body, receive_count=2), lambda_context, router)

    # THEN the retry takes the expired claim over and the job runs once
    assert failed_message_ids(first) == ["message-0"]
    assert second["batchItemFailures"] == []
    [job] = aws.store.list_all()
    assert processor_runs.runs_of(job["job_id"]) == 1


def test_a_missing_processor_function_is_retried_not_failed(
    aws: EmulatedAws, lambda_context: Any, make_router: RouterFactory, faults: Faults
) -> None:
    # GIVEN the processor function cannot be found (a deployment fault, not the user's; moto's
    # Docker-less Lambda answers any name, so the fault is injected at the client)
    aws.put_input("doc.pdf")
    faults.fail_calls(
        aws.lambda_client,
        "Invoke",
        code="ResourceNotFoundException",
        message=f"Function not found: {PROCESSOR_FUNCTION}",
        status=404,
    )

    # WHEN a job arrives
    event = sqs_event(direct("doc.pdf", model="ocr"))
    response = process_batch(event, lambda_context, make_router())

    # THEN the message is retried (and dead-lettered if it persists); the job stays QUEUED
    assert failed_message_ids(response) == ["message-0"]
    [job] = aws.store.list_all()
    assert job["status"] == JobStatus.QUEUED
    assert "ResourceNotFoundException" in job["last_dispatch_error"]


# -- telemetry ----------------------------------------------------------------------------------
def test_routing_emits_a_per_model_metric_and_logs_the_job_id(
    aws: EmulatedAws, make_router: RouterFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a structure job and an invoker logging to a buffer
    aws.put_input("doc.pdf")
    log = io.StringIO()
    router = make_router(logger=Logger(service="invoker-log-test", stream=log))

    # WHEN it is routed
    [outcome] = router.handle_message(direct("doc.pdf", model="structure"))

    # THEN a JobsRouted metric carries the model, and every job log line carries the job id
    metrics = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    assert {"JobsRouted": [1.0], "model": "PP-StructureV3"}.items() <= metrics[-1].items()
    logs = [json.loads(line) for line in log.getvalue().splitlines()]
    assert [entry["message"] for entry in logs] == ["job dispatched"]
    assert all(entry["job_id"] == outcome.job_id for entry in logs)
