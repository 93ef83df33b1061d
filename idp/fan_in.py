"""Fan-in of a chunked job: count each chunk's partial result once, merge when all are counted.

Shared by the two places a chunk can finish: the OCR processor (a CPU chunk, in
ocr_processor_image/chunk_worker.py) and the completion handler (a PaddleOCR-VL chunk, whose
output the endpoint wrote). Exactly once, under duplicates, retries and crashes:

- the partial result is written before the chunk is counted, and the count is one conditional
  write that adds the chunk's index to a set (`JobStore.commit_chunk`): a duplicate or retried
  delivery never counts twice;
- whoever sees every chunk counted merges, under a lease (`JobStore.claim_merge`): a merge that
  crashes is redone by the retry of the same event (the same invocation id takes the lease back
  at once), and two deliveries never merge at the same time. Completing is conditional, so a job
  is never completed twice.

Everything here is plain S3 and DynamoDB; the merge streams (idp/chunks.py), so its memory is
bounded by the largest chunk's text.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from idp import names
from idp.aws.s3 import s3_uri
from idp.chunks import (
    ChunkPlan,
    ChunkSpec,
    PartialResult,
    merged_timings,
    partial_key,
    plan_key,
    work_prefix,
)
from idp.chunks import write_merged_result as stream_merged_result
from idp.job_record import JobRecord
from idp.names import JobStatus
from idp.result_cache import ResultCache
from idp.results import result_key
from idp.store import JobStore
from idp.timestamps import ms, parse_timestamp, utc_now

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import ObjectIdentifierTypeDef

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Merged:
    """A merged, completed job."""

    result_uri: str
    pages: int
    timings_ms: dict[str, float] = field(default_factory=dict)


# What else a merge writes beside result.json, before the job completes: (job_id, plan).
ExtraOutputs = Callable[[str, ChunkPlan], None]


@dataclass(frozen=True, kw_only=True)
class FanIn:
    """Commits chunks of jobs whose work lives under work/<job_id>/ in `bucket`.

    `extra_outputs` writes the job's other merged outputs (the processor's result.pdf from the
    chunks' parts) after result.json and before the job completes.
    """

    s3: S3Client
    store: JobStore
    bucket: str
    extra_outputs: ExtraOutputs | None = None

    def read_plan(self, job_id: str) -> ChunkPlan:
        body = self.s3.get_object(Bucket=self.bucket, Key=plan_key(job_id))["Body"]
        return ChunkPlan.model_validate_json(body.read())

    def commit(self, partial: PartialResult) -> JobRecord | None:
        """Write the chunk's partial result and count it: the record after the count, or None
        when it was counted before (a duplicate) or the job has ended."""
        job_id, chunk = partial.job_id, partial.chunk
        self.s3.put_object(
            Bucket=self.bucket,
            Key=partial_key(job_id, chunk.index),
            Body=partial.model_dump_json().encode(),
            ContentType="application/json",
        )
        return self.store.commit_chunk(job_id, chunk_index=chunk.index, pages=chunk.page_count)

    def merge_if_complete(
        self,
        job_id: str,
        record: JobRecord,
        *,
        invocation_id: str,
        lease_seconds: float,
    ) -> Merged | None:
        """Merge and complete the job when every chunk is counted and this invocation wins the
        merge; None when chunks are still running or another invocation merges."""
        if record.get("chunks_done") != record.get("chunks_total"):
            # A stale read is harmless: the chunk whose count completes the set sees it complete.
            record = self.store.get(job_id) or record
        if record.get("chunks_done") != record.get("chunks_total"):
            return None
        if JobStatus(record["status"]).is_terminal:
            return None
        if not self.store.claim_merge(
            job_id, invocation_id=invocation_id, lease_seconds=lease_seconds
        ):
            logger.info("job %s is merged by another invocation or has ended", job_id)
            return None
        return self.merge(job_id, record)

    def merge(self, job_id: str, record: JobRecord) -> Merged:
        """Write the job's result.json (+ result.md) from its partials and complete it."""
        started = time.perf_counter()
        bucket = self.bucket
        plan = self.read_plan(job_id)

        def read_part(chunk: ChunkSpec) -> PartialResult:
            body = self.s3.get_object(Bucket=bucket, Key=partial_key(job_id, chunk.index))["Body"]
            return PartialResult.model_validate_json(body.read())

        def timings(parts: list[dict[str, float]]) -> dict[str, float]:
            merged = merged_timings(plan, parts, merge_ms=ms(time.perf_counter() - started))
            fan_out = record.get("fan_out_timings_ms") or {}
            merged["dispatch"] = float(fan_out.get("dispatch", 0.0))
            began = record.get("started_at") or record.get("created_at")
            if began:
                merged["total"] = ms(max(0.0, time.time() - parse_timestamp(began).timestamp()))
            return merged

        if self.extra_outputs is not None:
            # First, so that the merge's time in result.json includes them.
            self.extra_outputs(job_id, plan)
        json_key = result_key(job_id)
        with (
            tempfile.TemporaryFile() as result_file,
            tempfile.TemporaryFile() as markdown_file,
        ):
            merged = stream_merged_result(
                plan, read_part, result_file, timings=timings, markdown_out=markdown_file
            )
            result_file.seek(0)
            self.s3.upload_fileobj(
                result_file, bucket, json_key, ExtraArgs={"ContentType": "application/json"}
            )
            if merged.has_markdown:
                markdown_file.seek(0)
                self.s3.upload_fileobj(
                    markdown_file,
                    bucket,
                    result_key(job_id, names.RESULT_MD),
                    ExtraArgs={"ContentType": "text/markdown; charset=utf-8"},
                )
        if plan.cache_key is not None:
            ResultCache(self.s3, bucket).put_copy(plan.cache_key, source_key=json_key)
        result_uri = s3_uri(bucket, json_key)
        completed = self.store.mark_completed(
            job_id,
            result_uri=result_uri,
            page_count=merged.pages,
            timings_ms=merged.timings_ms,
            content_sha256=plan.source.sha256,
            media_type=plan.source.media_type,
            engine=merged.engine.model_dump(),
            merged_at=utc_now(),
        )
        if not completed:
            logger.warning("job %s was already terminal; merged result kept as written", job_id)
        self.delete_work(job_id)
        logger.info(
            "job %s merged: %d pages from %d chunks in %.0f ms",
            job_id,
            merged.pages,
            len(plan.chunks),
            merged.timings_ms.get("merge", 0.0),
        )
        return Merged(result_uri=result_uri, pages=merged.pages, timings_ms=merged.timings_ms)

    def delete_work(self, job_id: str) -> None:
        """Best effort: the bucket's lifecycle rule expires whatever this leaves."""
        try:
            paginator = self.s3.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=self.bucket, Prefix=work_prefix(job_id)):
                keys: list[ObjectIdentifierTypeDef] = [
                    {"Key": item["Key"]} for item in page.get("Contents", [])
                ]
                if keys:
                    self.s3.delete_objects(
                        Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True}
                    )
        except ClientError as exc:
            logger.warning("could not delete job %s's partials: %s", job_id, exc)
