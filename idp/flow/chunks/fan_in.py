"""Fan-in of a chunked job: count each chunk's partial result once, merge when all are counted.

A chunk's pages are read by the OCR processor itself or by the VL endpoint; either way the
processor (ocr_processor_image/chunked_job.py) commits them here and merges. Exactly once, under
duplicates, retries and crashes:

- the partial result is written before the chunk is counted, and the count is one conditional
  write that adds the chunk's index to a set (`JobStore.commit_chunk`): a duplicate or retried
  delivery never counts twice;
- whoever sees every chunk counted merges, under a lease (`JobStore.claim_merge`): a merge that
  crashes is redone by the retry of the same event (the same invocation id takes the lease back
  at once), and two deliveries never merge at the same time. Completing is conditional, so a job
  is never completed twice.

Everything here is plain S3 and DynamoDB; the merge streams (merge.py) through the one
writer of result files (idp/flow/result_files.py), so its memory is bounded by the largest
chunk's text.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from idp.contract.job_record import JobRecord
from idp.contract.jobs import ChunkSpec
from idp.contract.names import JobStatus
from idp.contract.results import result_key
from idp.contract.timestamps import ms, parse_timestamp
from idp.flow.chunks.merge import MergedResult, merged_timings
from idp.flow.chunks.plan import ChunkPlan, PartialResult, partial_key, plan_key, work_prefix
from idp.flow.result_cache import ResultCache
from idp.flow.result_files import ResultFiles, WrittenResult
from idp.jobstore.store import JobStore

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import ObjectIdentifierTypeDef

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MergedJob:
    """What a merge wrote: the job's result files and the facts its record keeps."""

    written: WrittenResult
    plan: ChunkPlan
    merged: MergedResult


@dataclass(frozen=True, kw_only=True)
class FanIn:
    """Commits chunks of jobs whose work lives under work/<job_id>/ in `bucket`."""

    s3: S3Client
    store: JobStore
    bucket: str

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

    def claim_merge(
        self, job_id: str, record: JobRecord, *, invocation_id: str, lease_seconds: float
    ) -> bool:
        """True when every chunk is counted and this invocation wins the merge; False when
        chunks are still running, another invocation merges, or the job has ended."""
        if record.get("chunks_done") != record.get("chunks_total"):
            # A stale read is harmless: the chunk whose count completes the set sees it complete.
            record = self.store.get(job_id) or record
        if record.get("chunks_done") != record.get("chunks_total"):
            return False
        if JobStatus(record["status"]).is_terminal:
            return False
        if not self.store.claim_merge(
            job_id, invocation_id=invocation_id, lease_seconds=lease_seconds
        ):
            logger.info("job %s is merged by another invocation or has ended", job_id)
            return False
        return True

    def write_result(self, job_id: str, record: JobRecord, *, started: float) -> MergedJob:
        """The job's result.json (+ result.md) from its partials, and its result-cache entry
        (`started`: time.perf_counter() when the merge began, for its time in the result)."""
        plan = self.read_plan(job_id)

        def read_part(chunk: ChunkSpec) -> PartialResult:
            key = partial_key(job_id, chunk.index)
            body = self.s3.get_object(Bucket=self.bucket, Key=key)["Body"]
            return PartialResult.model_validate_json(body.read())

        def timings(parts: list[dict[str, float]]) -> dict[str, float]:
            merged = merged_timings(plan, parts, merge_ms=ms(time.perf_counter() - started))
            fan_out = record.get("fan_out_timings_ms") or {}
            merged["dispatch"] = float(fan_out.get("dispatch", 0.0))
            began = record.get("started_at") or record.get("created_at")
            if began:
                merged["total"] = ms(max(0.0, time.time() - parse_timestamp(began).timestamp()))
            return merged

        written, merged = ResultFiles(self.s3, self.bucket).write_merged(
            plan, read_part, timings=timings
        )
        if plan.cache_key is not None:
            ResultCache(self.s3, self.bucket).put_copy(
                plan.cache_key, source_key=result_key(job_id, owner=plan.owner)
            )
        logger.info(
            "job %s merged: %d pages from %d chunks in %.0f ms",
            job_id,
            merged.pages,
            len(plan.chunks),
            merged.timings_ms.get("merge", 0.0),
        )
        return MergedJob(written=written, plan=plan, merged=merged)

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
