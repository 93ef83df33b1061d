"""The OCR processor's logic: one dispatched job → result.json (+ result.md) and a final status.

A user's bad input (JobError) ends the job FAILED with its code and returns normally, so
Lambda does not retry it. Anything else is a fault: it is re-raised so Lambda's async retries
run, and the on-failure destination ends the job FAILED (PROCESSOR_CRASHED) after the last one.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from botocore.exceptions import ClientError

from idp import names
from idp.documents import open_document
from idp.errors import InputNotFound, InputTooLarge, JobError
from idp.jobs import DispatchedJob, validate_language
from idp.names import Env, JobStatus, ProcessorEnv, Service
from idp.ocr.paddle_engines import EngineRegistry
from idp.ocr.pipeline import ocr_document
from idp.results import OcrResult
from idp.store import JobStore
from ocr_processor_image.result_cache import ResultCache, cache_key

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

# A child of the handler's logger: its records carry the job_id the handler appends.
logger = Logger(service=Service.PROCESSOR.value, child=True)


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class ProcessorSettings:
    jobs_table: str
    results_bucket: str
    model_cache_bucket: str | None = None
    max_pages: int = names.DEFAULT_MAX_PAGES
    max_input_bytes: int = names.DEFAULT_MAX_INPUT_BYTES
    allow_hub_download: bool = False
    models_dir: Path | None = None  # model dirs baked into the image (read-only)
    models_root: Path = field(default_factory=lambda: Path(tempfile.gettempdir()) / "idp-models")
    cpu_threads: int = 2

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ProcessorSettings:
        env = os.environ if env is None else env
        models_dir = env.get(ProcessorEnv.MODELS_DIR)
        defaults = cls(jobs_table="", results_bucket="")
        return cls(
            jobs_table=env[Env.JOBS_TABLE],
            results_bucket=env[Env.RESULTS_BUCKET],
            model_cache_bucket=env.get(Env.MODEL_CACHE_BUCKET) or None,
            max_pages=int(env.get(Env.MAX_PAGES) or names.DEFAULT_MAX_PAGES),
            max_input_bytes=int(env.get(Env.MAX_INPUT_BYTES) or names.DEFAULT_MAX_INPUT_BYTES),
            allow_hub_download=_flag(env.get(Env.ALLOW_HUB_DOWNLOAD)),
            models_dir=Path(models_dir) if models_dir else None,
            cpu_threads=int(env.get(ProcessorEnv.CPU_THREADS) or defaults.cpu_threads),
        )


@dataclass(frozen=True)
class JobOutcome:
    """What the invocation did; the handler returns it as the Lambda response."""

    job_id: str
    status: str  # COMPLETED | FAILED | SKIPPED (already terminal: a duplicate delivery)
    result_uri: str | None = None
    error: dict[str, str] | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"job_id": self.job_id, "status": self.status}
        if self.result_uri:
            out["result_uri"] = self.result_uri
        if self.error:
            out["error"] = self.error
        if self.timings_ms:
            out["timings_ms"] = self.timings_ms
        return out


def result_key(job_id: str, name: str = names.RESULT_JSON) -> str:
    return f"{names.RESULTS_PREFIX}{job_id}/{name}"


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def process_job(
    job: DispatchedJob,
    *,
    s3: S3Client,
    store: JobStore,
    engines: EngineRegistry,
    settings: ProcessorSettings,
    invocation_id: str | None = None,
    lease_seconds: float | None = None,
) -> JobOutcome:
    """Run one job to a terminal status. Re-raises only unexpected faults (for a retry).

    `invocation_id` (the Lambda request id, the same across retries of one async event) and
    `lease_seconds` (how long this invocation can run) keep a duplicate delivery of the event
    from OCR-ing the document while this invocation still may.
    """
    if not store.mark_processing(
        job.job_id, invocation_id=invocation_id, lease_seconds=lease_seconds
    ):
        logger.info("job %s is terminal or held by another invocation; skipped", job.job_id)
        return JobOutcome(job_id=job.job_id, status="SKIPPED")
    started = time.perf_counter()
    # The input and its pages stay in memory: a job leaves nothing in /tmp, so a warm
    # container's disk holds only the model cache.
    try:
        return _run(job, s3=s3, store=store, engines=engines, settings=settings, started=started)
    except JobError as error:
        logger.warning("job %s failed: %s %s", job.job_id, error.code, error.message)
        store.mark_failed(
            job.job_id, error, timings_ms={"total": _ms(time.perf_counter() - started)}
        )
        return JobOutcome(job_id=job.job_id, status=JobStatus.FAILED.value, error=error.to_record())


def _run(
    job: DispatchedJob,
    *,
    s3: S3Client,
    store: JobStore,
    engines: EngineRegistry,
    settings: ProcessorSettings,
    started: float,
) -> JobOutcome:
    timings: dict[str, float] = {}
    lang = validate_language(job.lang)

    tick = time.perf_counter()
    data = download_input(s3, job.bucket, job.key, max_bytes=settings.max_input_bytes)
    timings["download"] = _ms(time.perf_counter() - tick)

    # Refuse a bad file before paying for an engine load (seconds in a cold environment).
    with open_document(data, pdf_scale=job.options.pdf_scale, max_pages=settings.max_pages):
        pass

    cache = ResultCache(s3, settings.results_bucket)
    content_key = cache_key(
        content_sha256=hashlib.sha256(data).hexdigest(),
        model=job.model,
        lang=lang,
        options=job.options,
    )
    cached = cache.get(content_key)
    if cached is not None:
        return _complete_from_cache(
            job, cached, s3=s3, store=store, settings=settings, timings=timings, started=started
        )

    tick = time.perf_counter()
    engine = engines.get(job.model, lang, job.options)
    timings["engine_load"] = _ms(time.perf_counter() - tick)

    outcome = ocr_document(data, engine=engine, options=job.options, max_pages=settings.max_pages)
    timings.update(outcome.timings_ms)

    tick = time.perf_counter()
    result = OcrResult.assemble(
        job_id=job.job_id,
        model=job.model.value,
        lang=lang,
        engine=engine.info,
        source=outcome.source(bucket=job.bucket, key=job.key),
        pages=outcome.pages,
        timings_ms=timings,
    )
    result_uri = _write_result(s3, settings.results_bucket, result)
    cache.put(content_key, result)
    timings["write_result"] = _ms(time.perf_counter() - tick)
    timings["total"] = _ms(time.perf_counter() - started)

    completed = store.mark_completed(
        job.job_id,
        result_uri=result_uri,
        page_count=len(outcome.pages),
        timings_ms=timings,
        content_sha256=outcome.sha256,
        media_type=outcome.media_type.value,
        engine=engine.info.model_dump(),
    )
    if not completed:
        # Ended meanwhile (e.g. by the stale-job sweep): the record stays as it is.
        logger.warning("job %s was already terminal; result written but status kept", job.job_id)
    logger.info(
        "job %s completed: %d pages in %.0f ms", job.job_id, len(outcome.pages), timings["total"]
    )
    return JobOutcome(
        job_id=job.job_id,
        status=JobStatus.COMPLETED.value,
        result_uri=result_uri,
        timings_ms=timings,
    )


def _write_result(s3: S3Client, bucket: str, result: OcrResult) -> str:
    """result.json (+ result.md when the model yields Markdown); returns the JSON's URI."""
    json_key = result_key(result.job_id)
    s3.put_object(
        Bucket=bucket,
        Key=json_key,
        Body=result.model_dump_json().encode(),
        ContentType="application/json",
    )
    if result.markdown is not None:
        s3.put_object(
            Bucket=bucket,
            Key=result_key(result.job_id, names.RESULT_MD),
            Body=result.markdown.encode(),
            ContentType="text/markdown; charset=utf-8",
        )
    return f"s3://{bucket}/{json_key}"


def _complete_from_cache(
    job: DispatchedJob,
    cached: OcrResult,
    *,
    s3: S3Client,
    store: JobStore,
    settings: ProcessorSettings,
    timings: dict[str, float],
    started: float,
) -> JobOutcome:
    """The same bytes were OCR'd before with the same settings: reuse that result."""
    timings["total"] = _ms(time.perf_counter() - started)
    result = cached.model_copy(
        update={
            "job_id": job.job_id,
            "source": cached.source.model_copy(update={"bucket": job.bucket, "key": job.key}),
            "timings_ms": dict(timings),
            "cached": True,
        }
    )
    result_uri = _write_result(s3, settings.results_bucket, result)
    store.mark_completed(
        job.job_id,
        result_uri=result_uri,
        page_count=len(result.pages),
        timings_ms=timings,
        content_sha256=result.source.sha256,
        media_type=result.source.media_type,
        engine=result.engine.model_dump(),
        cached=True,
    )
    logger.info("job %s completed from the result cache", job.job_id)
    return JobOutcome(
        job_id=job.job_id,
        status=JobStatus.COMPLETED.value,
        result_uri=result_uri,
        timings_ms=timings,
    )


def download_input(s3: S3Client, bucket: str, key: str, *, max_bytes: int) -> bytes:
    """The input's bytes, in one GET. InputNotFound / InputTooLarge for users."""
    try:
        response = s3.get_object(Bucket=bucket, Key=key)
    except ClientError as exc:
        if _is_missing(exc):
            raise InputNotFound(f"input s3://{bucket}/{key} does not exist") from None
        raise
    body = response["Body"]
    size = int(response.get("ContentLength", 0))
    if size > max_bytes:
        body.close()  # never read a body we will refuse
        raise InputTooLarge(
            f"input s3://{bucket}/{key} is {size} bytes; the limit is {max_bytes} bytes "
            f"(setting {Env.MAX_INPUT_BYTES.value})"
        )
    data: bytes = body.read()
    return data


def _is_missing(exc: ClientError) -> bool:
    code = exc.response.get("Error", {}).get("Code")
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code in ("404", "NoSuchKey", "NotFound", "NoSuchBucket") or status == 404
