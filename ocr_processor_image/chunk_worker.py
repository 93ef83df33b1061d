"""One chunk of a large document: OCR its pages, count it once, and merge when it is the last.

Exactly once, under duplicates, retries and crashes:
- a chunk whose job has ended does nothing (another chunk failed it, or it completed);
- the partial result is written before the chunk is counted, and the count is one conditional
  write that adds the chunk's index to a set (`JobStore.commit_chunk`): a duplicate or retried
  delivery never counts twice, and a chunk counted before is not OCR'd again;
- whoever sees every chunk counted merges, under a lease (`JobStore.claim_merge`): a merge that
  crashes is redone by Lambda's retry of the same event (same request id, so it takes the lease
  back at once), and two deliveries never merge at the same time. Completing is conditional, so
  a job is never completed twice;
- a user error in any chunk (a damaged page) fails the whole job with that error's code; the
  other chunks then find the job ended. A chunk that crashes on every attempt reaches the
  on-failure destination, and the completion handler fails the job naming its pages.
"""

from __future__ import annotations

import tempfile
import time
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from botocore.exceptions import ClientError

from idp.chunks import (
    ChunkPlan,
    ChunkSpec,
    PartialResult,
    merged_timings,
    partial_key,
    plan_key,
    work_prefix,
    write_merged_result,
)
from idp.errors import JobError
from idp.jobs import DispatchedJob, validate_language
from idp.names import RESULT_MD, JobStatus, Service
from idp.ocr.paddle_engines import EngineRegistry
from idp.ocr.pipeline import ocr_document
from idp.store import JobStore, parse_timestamp, utc_now
from idp.text_layer.page import text_layer_reader
from ocr_processor_image.outputs import JobOutcome, download_input, ms, result_key
from ocr_processor_image.result_cache import ResultCache
from ocr_processor_image.settings import ProcessorSettings

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import ObjectIdentifierTypeDef

logger = Logger(service=Service.PROCESSOR.value, child=True)

CHUNK_DONE = "CHUNK_DONE"


def run_chunk(
    job: DispatchedJob,
    chunk: ChunkSpec,
    *,
    s3: S3Client,
    store: JobStore,
    engines: EngineRegistry,
    settings: ProcessorSettings,
    invocation_id: str,
    lease_seconds: float,
) -> JobOutcome:
    record = store.get(job.job_id)
    if record is None or JobStatus(record["status"]).is_terminal:
        logger.info("job %s has ended; chunk %d skipped", job.job_id, chunk.index)
        return JobOutcome(job_id=job.job_id, status="SKIPPED")
    if chunk.index not in record.get("chunks_committed", []):
        try:
            partial = _ocr_chunk(job, chunk, s3=s3, store=store, engines=engines, settings=settings)
        except JobError as error:
            logger.warning(
                "job %s failed in %s: %s %s", job.job_id, chunk.label, error.code, error.message
            )
            store.mark_failed(job.job_id, error, failed_pages=chunk.label)
            return JobOutcome(
                job_id=job.job_id, status=JobStatus.FAILED.value, error=error.to_record()
            )
        s3.put_object(
            Bucket=settings.results_bucket,
            Key=partial_key(job.job_id, chunk.index),
            Body=partial.model_dump_json().encode(),
            ContentType="application/json",
        )
        counted = store.commit_chunk(job.job_id, chunk_index=chunk.index, pages=chunk.page_count)
        if counted is None:
            logger.info("chunk %d of job %s was counted before", chunk.index, job.job_id)
        else:
            record = counted
    if record.get("chunks_done") != record.get("chunks_total"):
        # A stale read is harmless: the chunk whose count completes the set sees it complete.
        record = store.get(job.job_id) or record
    if record.get("chunks_done") != record.get("chunks_total"):
        return JobOutcome(job_id=job.job_id, status=CHUNK_DONE)
    if JobStatus(record["status"]).is_terminal:
        return JobOutcome(job_id=job.job_id, status="SKIPPED")
    if not store.claim_merge(job.job_id, invocation_id=invocation_id, lease_seconds=lease_seconds):
        logger.info("job %s is merged by another invocation or has ended", job.job_id)
        return JobOutcome(job_id=job.job_id, status="SKIPPED")
    return merge(job, record, s3=s3, store=store, settings=settings)


def _ocr_chunk(
    job: DispatchedJob,
    chunk: ChunkSpec,
    *,
    s3: S3Client,
    store: JobStore,
    engines: EngineRegistry,
    settings: ProcessorSettings,
) -> PartialResult:
    started = time.perf_counter()
    timings: dict[str, float] = {}
    lang = validate_language(job.lang)
    if chunk.part_key is not None:
        data = download_input(
            s3, settings.results_bucket, chunk.part_key, max_bytes=settings.max_input_bytes
        )
        pages: dict[str, Any] = {"page_offset": chunk.first_page - 1}
    else:
        data = download_input(s3, job.bucket, job.key, max_bytes=settings.max_input_bytes)
        pages = {"first_page": chunk.first_page, "last_page": chunk.last_page}
    timings["download"] = ms(time.perf_counter() - started)

    tick = time.perf_counter()
    engine = engines.get(job.model, lang, job.options)
    timings["engine_load"] = ms(time.perf_counter() - tick)

    def progress(done: int) -> None:
        if done < chunk.page_count:  # the last page is counted by commit_chunk
            store.record_progress(job.job_id, chunk_index=chunk.index, pages_read=done)

    outcome = ocr_document(
        data,
        engine=engine,
        options=job.options,
        max_pages=settings.max_pages,
        on_pages_done=progress,
        read_page=text_layer_reader(job),
        **pages,
    )
    timings.update(outcome.timings_ms)
    timings["total"] = ms(time.perf_counter() - started)
    return PartialResult(
        job_id=job.job_id, chunk=chunk, engine=engine.info, pages=outcome.pages, timings_ms=timings
    )


def merge(
    job: DispatchedJob,
    record: dict[str, Any],
    *,
    s3: S3Client,
    store: JobStore,
    settings: ProcessorSettings,
) -> JobOutcome:
    """Write the job's result.json (+ result.md) from its partials and complete it."""
    started = time.perf_counter()
    bucket = settings.results_bucket
    plan = ChunkPlan.model_validate_json(
        s3.get_object(Bucket=bucket, Key=plan_key(job.job_id))["Body"].read()
    )

    def read_part(chunk: ChunkSpec) -> PartialResult:
        body = s3.get_object(Bucket=bucket, Key=partial_key(job.job_id, chunk.index))["Body"]
        return PartialResult.model_validate_json(body.read())

    def timings(parts: list[dict[str, float]]) -> dict[str, float]:
        merged = merged_timings(plan, parts, merge_ms=ms(time.perf_counter() - started))
        merged["dispatch"] = float((record.get("fan_out_timings_ms") or {}).get("dispatch", 0.0))
        if record.get("started_at"):
            wall = time.time() - parse_timestamp(record["started_at"]).timestamp()
            merged["total"] = ms(max(0.0, wall))
        return merged

    with (
        tempfile.TemporaryFile() as result_file,
        tempfile.TemporaryFile() as markdown_file,
    ):
        merged = write_merged_result(
            plan, read_part, result_file, timings=timings, markdown_out=markdown_file
        )
        json_key = result_key(job.job_id)
        result_file.seek(0)
        s3.upload_fileobj(
            result_file, bucket, json_key, ExtraArgs={"ContentType": "application/json"}
        )
        if merged.has_markdown:
            markdown_file.seek(0)
            s3.upload_fileobj(
                markdown_file,
                bucket,
                result_key(job.job_id, RESULT_MD),
                ExtraArgs={"ContentType": "text/markdown; charset=utf-8"},
            )
    ResultCache(s3, bucket).put_copy(plan.cache_key, source_key=json_key)
    completed = store.mark_completed(
        job.job_id,
        result_uri=f"s3://{bucket}/{json_key}",
        page_count=merged.pages,
        timings_ms=merged.timings_ms,
        content_sha256=plan.source.sha256,
        media_type=plan.source.media_type,
        engine=merged.engine.model_dump(),
        merged_at=utc_now(),
    )
    if not completed:
        logger.warning(
            "job %s was already terminal; merged result written, status kept", job.job_id
        )
    _delete_work(s3, bucket, job.job_id)
    logger.info(
        "job %s merged: %d pages from %d chunks in %.0f ms",
        job.job_id,
        merged.pages,
        len(plan.chunks),
        merged.timings_ms.get("merge", 0.0),
    )
    return JobOutcome(
        job_id=job.job_id,
        status=JobStatus.COMPLETED.value,
        result_uri=f"s3://{bucket}/{json_key}",
        timings_ms=merged.timings_ms,
    )


def _delete_work(s3: S3Client, bucket: str, job_id: str) -> None:
    """Best effort: the bucket's lifecycle rule expires whatever this leaves."""
    try:
        paginator = s3.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=bucket, Prefix=work_prefix(job_id)):
            keys: list[ObjectIdentifierTypeDef] = [
                {"Key": item["Key"]} for item in page.get("Contents", [])
            ]
            if keys:
                s3.delete_objects(Bucket=bucket, Delete={"Objects": keys, "Quiet": True})
    except ClientError as exc:
        logger.warning("could not delete job %s's partials: %s", job_id, exc)
