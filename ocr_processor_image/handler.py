"""Lambda entry point of the OCR processor (container image): async-invoked with a DispatchedJob.

Thin: parse the event, hand it to `process_job` with the container's `WarmState` (settings,
clients, store and engine registry), created once per container on the first invocation.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import ValidationError

from idp.aws.clients import client, dynamodb_table
from idp.contract.errors import InvalidMessage
from idp.contract.jobs import DispatchedJob
from idp.contract.names import Service
from idp.document.ocr.models.cache import ModelCache
from idp.document.ocr.paddle.environment import prepare_paddle_environment
from idp.document.ocr.registry import EngineRegistry
from idp.document.ocr.settings import EngineSettings
from idp.flow.lambda_invoke import LambdaProcessorInvoker
from idp.flow.office_conversion import CONVERTER_CLIENT_CONFIG, LambdaDocumentConverter
from idp.flow.vl_submit import VlEndpointSubmitter
from idp.jobstore.store import JobStore
from ocr_processor_image.job import process_job
from ocr_processor_image.outcome import InvocationStatus
from ocr_processor_image.settings import ProcessorSettings
from ocr_processor_image.warm_state import WarmState

logger = Logger(service=Service.PROCESSOR.value)


_warm: WarmState | None = None


def build_warm_state(settings: ProcessorSettings | None = None) -> WarmState:
    settings = settings or ProcessorSettings.from_env()
    prepare_paddle_environment()
    s3 = client("s3")
    cache = ModelCache(
        s3=s3,
        bucket=settings.model_cache_bucket,
        local_root=settings.models_root,
        search_roots=(settings.models_dir,) if settings.models_dir else (),
        allow_hub_download=settings.allow_hub_download,
    )
    engines = EngineRegistry(
        resolve=cache.fetch,
        settings=EngineSettings(
            cpu_threads=settings.cpu_threads, ppocrv6_size=settings.ppocrv6_size
        ),
    )
    chunks = (
        LambdaProcessorInvoker(client("lambda"), function_name=settings.function_name)
        if settings.function_name
        else None
    )
    vl = (
        VlEndpointSubmitter(
            s3=s3,
            runtime=client("sagemaker-runtime"),
            endpoint_name=settings.vl_endpoint_name,
            results_bucket=settings.results_bucket,
        )
        if settings.vl_endpoint_name
        else None
    )
    converter = (
        LambdaDocumentConverter(
            client("lambda", config=CONVERTER_CLIENT_CONFIG),
            function_name=settings.converter_function,
        )
        if settings.converter_function
        else None
    )
    return WarmState(
        settings=settings,
        s3=s3,
        store=JobStore(dynamodb_table(settings.jobs_table)),
        engines=engines,
        chunks=chunks,
        vl=vl,
        telemetry=settings.telemetry(),
        converter=converter,
    )


def get_warm_state() -> WarmState:
    global _warm  # noqa: PLW0603 - the warm container's one shared state
    if _warm is None:
        _warm = build_warm_state()
    return _warm


def set_warm_state(warm: WarmState | None) -> None:
    """Test seam: install a warm state built around other clients."""
    global _warm  # noqa: PLW0603
    _warm = warm


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    warm = get_warm_state()
    try:
        job = DispatchedJob.model_validate(event)
    except ValidationError as exc:
        # The invoker only sends validated jobs: this is a bug or a stray invoke. Record it
        # on the job when the event names one; never raise (a retry cannot fix it).
        error = InvalidMessage(f"invalid processor event: {exc.error_count()} problems: {exc}")
        job_id = event.get("job_id") if isinstance(event, dict) else None
        logger.error("invalid processor event", extra={"job_id": job_id})
        if isinstance(job_id, str) and job_id:
            warm.store.mark_failed(job_id, error)
        return {
            "job_id": job_id,
            "status": InvocationStatus.REJECTED.value,
            "error": error.to_record(),
        }
    logger.append_keys(job_id=job.job_id, model=job.model.value, lang=job.lang)
    outcome = process_job(
        job,
        warm,
        invocation_id=context.aws_request_id,
        # Held for what is left of this invocation, plus a margin for clock skew.
        lease_seconds=context.get_remaining_time_in_millis() / 1000 + 60,
    )
    logger.info(
        "job finished", extra={"status": outcome.status.value, "timings_ms": outcome.timings_ms}
    )
    return outcome.as_dict()
