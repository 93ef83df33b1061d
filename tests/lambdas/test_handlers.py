"""The three handlers end to end with their production wiring (settings from the environment,
clients built on first use) against the emulated account, driven by the sample events."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from idp.contract import names
from idp.contract.env.functions import Env
from idp.contract.names import JobStatus
from lambdas.completion import handler as completion_handler
from lambdas.invoker import handler as invoker_handler
from lambdas.invoker.settings import InvokerSettings
from lambdas.scale_in import handler as scale_in_handler
from tests.lambdas.support import (
    INPUT_BUCKET,
    JOBS_TABLE,
    OUTPUT_KEY,
    PROCESSOR_FUNCTION,
    RESULTS_BUCKET,
    VL_ENDPOINT,
    VL_JOB,
    EmulatedAws,
    endpoint_result,
    load_event,
    queue_vl_job,
    sqs_event,
)

ENVIRONMENT = {
    Env.JOBS_TABLE: JOBS_TABLE,
    Env.INPUT_BUCKET: INPUT_BUCKET,
    Env.RESULTS_BUCKET: RESULTS_BUCKET,
    Env.PROCESSOR_FUNCTION: PROCESSOR_FUNCTION,
    Env.VL_ENABLED: "true",
    Env.VL_ENDPOINT_NAME: VL_ENDPOINT,
    Env.VL_VARIANT_NAME: names.VL_VARIANT_NAME,
    Env.MAX_INPUT_BYTES: str(names.DEFAULT_MAX_INPUT_BYTES),
}


def _clear_handler_caches() -> None:
    for cached in (
        invoker_handler.job_router,
        completion_handler.completion_recorder,
        scale_in_handler.endpoint_scaler,
    ):
        cached.cache_clear()


@pytest.fixture
def deployed(aws: EmulatedAws, monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatedAws]:
    """The functions' environment as the stack sets it; a cold start before and after."""
    for key, value in ENVIRONMENT.items():
        monkeypatch.setenv(key.value, value)
    _clear_handler_caches()
    yield aws
    _clear_handler_caches()


def upload_vl_report(deployed: EmulatedAws, lambda_context: Any) -> Any:
    """Upload a PaddleOCR-VL document and run the invoker on the sample S3 event, naming it."""
    deployed.put_input("input/PaddleOCR-VL/report.pdf")
    body = load_event("sqs_s3_object_created.json")["Records"][0]["body"].replace(
        "input/PP-OCRv5/scans/Invoice+2026+%C3%A9t%C3%A9.pdf", "input/PaddleOCR-VL/report.pdf"
    )
    return invoker_handler.lambda_handler(sqs_event(body), lambda_context)


def test_invoker_handles_the_sample_s3_event(deployed: EmulatedAws, lambda_context: Any) -> None:
    # GIVEN the uploaded object the sample S3 notification names
    deployed.put_input("input/PP-OCRv5/scans/Invoice 2026 été.pdf")

    # WHEN the invoker runs on the sample SQS event
    response = invoker_handler.lambda_handler(
        load_event("sqs_s3_object_created.json"), lambda_context
    )

    # THEN the job is QUEUED and was handed to the processor through a real async invoke
    assert response["batchItemFailures"] == []
    [job] = deployed.store.list_all()
    assert job["status"] == JobStatus.QUEUED
    assert job["object_version"] == "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY"
    assert job["dispatch_target"] == f"lambda:{PROCESSOR_FUNCTION}"
    assert "dispatch_confirmed_at" in job


def test_invoker_handles_the_sample_direct_message_and_test_event(
    deployed: EmulatedAws, lambda_context: Any
) -> None:
    # GIVEN the input of the sample direct message
    deployed.put_input("uploads/contract.pdf")
    direct = load_event("sqs_direct_job_message.json")["Records"][0]["body"]
    test_event = load_event("sqs_s3_test_event.json")["Records"][0]["body"]

    # WHEN both arrive in one batch
    response = invoker_handler.lambda_handler(sqs_event(test_event, direct), lambda_context)

    # THEN the test event is acknowledged and the job is queued under its own id
    assert response["batchItemFailures"] == []
    assert [job["job_id"] for job in deployed.store.list_all()] == ["contract-2026-001"]


def test_invoker_scales_the_endpoint_out_and_hands_a_vl_job_to_the_processor(
    deployed: EmulatedAws, lambda_context: Any
) -> None:
    # GIVEN VL enabled and the endpoint at zero
    deployed.set_vl_instances(0)
    # WHEN the invoker runs on the sample S3 event, for a PaddleOCR-VL upload
    response = upload_vl_report(deployed, lambda_context)

    # THEN the endpoint is scaling out and the processor was started to plan the job
    assert response["batchItemFailures"] == []
    [job] = deployed.store.list_all()
    assert job["dispatch_target"].startswith("lambda:")
    assert job["vl_endpoint"].startswith("sagemaker:")
    assert deployed.vl_instances() == 1


def test_invoker_without_vl_fails_vl_jobs_with_a_clear_error(
    deployed: EmulatedAws, lambda_context: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a stack deployed without the VL endpoint
    monkeypatch.setenv(Env.VL_ENABLED.value, "false")
    monkeypatch.setenv(Env.VL_ENDPOINT_NAME.value, "")
    # WHEN a VL job arrives
    response = upload_vl_report(deployed, lambda_context)

    # THEN it ends FAILED UNSUPPORTED_MODEL, saying why, and is not retried
    assert response["batchItemFailures"] == []
    [job] = deployed.store.list_all()
    assert job["error"]["code"] == "UNSUPPORTED_MODEL"
    assert "without the PaddleOCR-VL endpoint" in job["error"]["message"]


def test_invoker_settings_refuse_vl_without_an_endpoint_name() -> None:
    # GIVEN VL enabled but no endpoint name
    environ = {
        Env.JOBS_TABLE.value: JOBS_TABLE,
        Env.RESULTS_BUCKET.value: RESULTS_BUCKET,
        Env.PROCESSOR_FUNCTION.value: PROCESSOR_FUNCTION,
        Env.VL_ENABLED.value: "true",
    }

    # WHEN the settings are read
    # THEN they are rejected, naming the missing variable
    with pytest.raises(ValidationError, match=Env.VL_ENDPOINT_NAME.value):
        InvokerSettings.from_env(environ)


def test_completion_handler_hands_the_sample_success_to_the_processor(
    deployed: EmulatedAws, lambda_context: Any
) -> None:
    # GIVEN a dispatched VL job and the endpoint's output at the sample's outputLocation
    queue_vl_job(deployed)
    deployed.s3.put_object(
        Bucket=RESULTS_BUCKET, Key=OUTPUT_KEY, Body=endpoint_result().model_dump_json().encode()
    )

    # WHEN the completion handler runs on the sample SNS event
    response = completion_handler.lambda_handler(
        load_event("sns_sagemaker_async_success.json"), lambda_context
    )

    # THEN the job is handed to the processor (moto accepted the async invoke), which finishes
    # it from the output (tests/ocr_processor_image/test_endpoint_results.py)
    assert response["outcomes"] == [
        {"completion": "handed-over", "job_id": VL_JOB, "error_code": None}
    ]
    assert deployed.job(VL_JOB)["status"] == JobStatus.QUEUED


def test_scale_in_handler_acts_on_the_sample_alarm_and_ignores_ok(
    deployed: EmulatedAws, lambda_context: Any
) -> None:
    # GIVEN the endpoint at one instance
    deployed.set_vl_instances(1)

    # WHEN the OK notification and then the ALARM notification arrive
    ok = scale_in_handler.lambda_handler(load_event("sns_cloudwatch_alarm_ok.json"), lambda_context)
    after_ok = deployed.vl_instances()
    alarm = scale_in_handler.lambda_handler(
        load_event("sns_cloudwatch_alarm_alarm.json"), lambda_context
    )

    # THEN OK changed nothing and ALARM scaled the endpoint in to zero
    assert ok["reports"][0]["action"] == "not-in-alarm"
    assert after_ok == 1
    assert alarm["reports"][0]["action"] == "scaled-in"
    assert deployed.vl_instances() == 0
