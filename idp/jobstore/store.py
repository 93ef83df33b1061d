"""The job status store over DynamoDB.

Transitions QUEUED → PROCESSING → COMPLETED | FAILED are conditional writes, so a terminal
status never regresses and a duplicate delivery never creates a second job or a second run.
The table's layout and the conditional write itself are in `idp.jobstore.job_table`; a long
document's chunk counters in `idp.jobstore.chunk_bookkeeping`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final, cast

from boto3.dynamodb.conditions import Attr, ConditionBase, Key

from idp.contract import names
from idp.contract.errors import JobError
from idp.contract.job_record import JobRecord
from idp.contract.names import JobStatus, OcrModel
from idp.contract.topology import DISPATCH_LEASE_SECONDS
from idp.jobstore.chunk_bookkeeping import ChunkBookkeeping
from idp.jobstore.job_table import (
    WHILE_ACTIVE,
    Clock,
    from_dynamo,
    jobs_table_definition,
    system_clock,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

__all__ = ["DEFAULT_DISPATCH_LEASE_SECONDS", "Clock", "JobStore", "jobs_table_definition"]

# Longer than one invoker run (its timeout), shorter than the queue's visibility timeout, so the
# redelivery that follows a crashed invoker can take the claim over.
DEFAULT_DISPATCH_LEASE_SECONDS: Final = DISPATCH_LEASE_SECONDS


class JobStore(ChunkBookkeeping):
    """Reads and transitions job records. Takes its DynamoDB Table and optionally a clock
    (default: now) for every timestamp and lease it writes, and how many days a new record
    lives (0: kept); creates no clients."""

    def __init__(self, table: Table, *, clock: Clock = system_clock, retention_days: int = 0):
        super().__init__(table, clock=clock)
        self._retention = timedelta(days=retention_days)

    # -- creation -----------------------------------------------------------------------------
    def create(
        self,
        *,
        job_id: str,
        model: OcrModel,
        lang: str,
        input_bucket: str,
        input_key: str,
        options: Mapping[str, Any],
        object_version: str | None = None,
        content_sha256: str | None = None,
        **fields: Any,
    ) -> bool:
        """Write a QUEUED record. Returns False when the job already exists (a redelivery)."""
        item = self._new_item(job_id, JobStatus.QUEUED, input_bucket, input_key, object_version)
        item |= {"model": model.value, "backend": model.backend.value, "lang": lang}
        if content_sha256:
            item["content_sha256"] = content_sha256
        return self._put_new({**item, "options": dict(options), **fields})

    def create_failed(
        self,
        *,
        job_id: str,
        error: JobError,
        model: str,
        lang: str | None,
        input_bucket: str,
        input_key: str,
        options: Mapping[str, Any] | None = None,
        object_version: str | None = None,
        **fields: Any,
    ) -> bool:
        """Write a job that is FAILED from the start: its request was invalid.

        `model` and `lang` are recorded as the user sent them (they may be what was wrong).
        Returns False when the job already exists (a redelivery of the same bad request).
        """
        item = self._new_item(job_id, JobStatus.FAILED, input_bucket, input_key, object_version)
        item |= {"model": model, "lang": lang or "", "error": error.to_record()}
        with contextlib.suppress(KeyError):  # an unknown model has no backend
            item["backend"] = OcrModel.parse(model).backend.value
        item["finished_at"] = item["created_at"]
        return self._put_new({**item, "options": dict(options or {}), **fields})

    def _new_item(
        self,
        job_id: str,
        status: JobStatus,
        input_bucket: str,
        input_key: str,
        object_version: str | None,
    ) -> dict[str, Any]:
        now = self._now()
        item: dict[str, Any] = {
            names.JOB_ID_ATTR: job_id,
            "status": status.value,
            "input_bucket": input_bucket,
            "input_key": input_key,
            "input_uri": f"s3://{input_bucket}/{input_key}",
            "attempts": 0,
            "created_at": now,
            "updated_at": now,
            "timings_ms": {},
        }
        if object_version:
            item["object_version"] = object_version
        if self._retention:  # DynamoDB's TTL deletes the record some time after this moment
            item[names.EXPIRES_AT_ATTR] = int((self._clock() + self._retention).timestamp())
        return item

    # -- dispatch claim -------------------------------------------------------------------------
    def claim_dispatch(
        self, job_id: str, *, lease_seconds: int = DEFAULT_DISPATCH_LEASE_SECONDS
    ) -> bool:
        """Take the right to dispatch a QUEUED job; only one concurrent delivery wins.

        The claim is a lease: if its holder dies before confirming (`record_dispatch`) or
        releasing it, a later delivery may take it over once `lease_seconds` have passed, so a
        lost release never strands the job. A confirmed dispatch is never taken over.
        """
        return self._update(
            job_id,
            "SET dispatched_at = :now, dispatch_lease_until = :until, updated_at = :now",
            self._lease(lease_seconds),
            condition=(
                "#s = :queued AND (attribute_not_exists(dispatched_at) OR "
                "(attribute_not_exists(dispatch_confirmed_at) AND dispatch_lease_until < :now))"
            ),
        )

    def release_dispatch(self, job_id: str, *, reason: str | None = None) -> None:
        """Give the claim back after a failed dispatch so the redelivered message retries.

        `reason` is kept on the record (`last_dispatch_error`, `dispatch_failures`) so a job
        waiting for its retry, or parked with its message in the dead-letter queue, says why.
        """
        expression = "REMOVE dispatched_at SET updated_at = :now"
        values: dict[str, Any] = {}
        if reason is not None:
            expression += ", last_dispatch_error = :reason ADD dispatch_failures :one"
            values = {":reason": reason[:1000], ":one": 1}
        self._update(job_id, expression, values, condition="#s = :queued")

    def record_dispatch(self, job_id: str, **fields: Any) -> None:
        """Confirm a dispatch and attach its facts (target, inference id, manifest URI).

        Only for a job that is still active; a confirmed claim is never taken over.
        """
        self._update(
            job_id,
            "SET dispatch_confirmed_at = :now, updated_at = :now",
            {},
            condition=WHILE_ACTIVE,
            fields=fields,
        )

    # -- transitions ----------------------------------------------------------------------------
    def mark_processing(
        self,
        job_id: str,
        *,
        invocation_id: str | None = None,
        lease_seconds: float | None = None,
        **fields: Any,
    ) -> bool:
        """QUEUED|PROCESSING → PROCESSING, counting the attempt. False if already terminal.

        With an `invocation_id` the job is held for `lease_seconds`: a retry of the same
        invocation (Lambda retries an async event under its request id) takes it back at once,
        while a different invocation — a duplicate delivery of the event — gets False until the
        holder's lease has run out, so one document is never OCR'd twice at the same time.
        """
        expression = "ADD attempts :one SET #s = :processing, started_at = :now, updated_at = :now"
        values: dict[str, Any] = {":one": 1}
        condition = WHILE_ACTIVE
        if invocation_id is not None:
            values |= {":inv": invocation_id, **self._lease(lease_seconds or 0)}
            expression += ", processing_invocation = :inv, processing_lease_until = :until"
            condition = (
                "#s = :queued OR (#s = :processing AND ("
                "attribute_not_exists(processing_invocation) OR processing_invocation = :inv OR "
                "processing_lease_until < :now))"
            )
        return self._update(job_id, expression, values, condition=condition, fields=fields)

    def mark_completed(
        self,
        job_id: str,
        *,
        result_uri: str,
        page_count: int,
        timings_ms: Mapping[str, float],
        **fields: Any,
    ) -> bool:
        """Active → COMPLETED. False when the job was already terminal (duplicate completion)."""
        return self._finish(
            job_id,
            JobStatus.COMPLETED,
            {
                "result_uri": result_uri,
                "page_count": page_count,
                "timings_ms": dict(timings_ms),
                **fields,
            },
        )

    def mark_failed(self, job_id: str, error: JobError, **fields: Any) -> bool:
        """Active → FAILED with the error's code and message. False when already terminal."""
        return self._finish(job_id, JobStatus.FAILED, {"error": error.to_record(), **fields})

    def mark_stale(self, job_id: str, error: JobError, *, last_updated_at: str) -> bool:
        """Active → FAILED, only if nothing touched the job since `last_updated_at` was read."""
        return self._finish(
            job_id,
            JobStatus.FAILED,
            {"error": error.to_record()},
            unchanged_since=last_updated_at,
        )

    def _finish(
        self,
        job_id: str,
        status: JobStatus,
        fields: Mapping[str, Any],
        *,
        unchanged_since: str | None = None,
    ) -> bool:
        values: dict[str, Any] = {":status": status.value}
        condition = WHILE_ACTIVE
        if unchanged_since is not None:
            condition += " AND updated_at = :seen"
            values[":seen"] = unchanged_since
        return self._update(
            job_id,
            "SET #s = :status, finished_at = :now, updated_at = :now",
            values,
            condition=condition,
            fields=fields,
        )

    # -- queries --------------------------------------------------------------------------------
    def get(self, job_id: str) -> JobRecord | None:
        item = self._table.get_item(Key={names.JOB_ID_ATTR: job_id}, ConsistentRead=True).get(
            "Item"
        )
        return cast("JobRecord", from_dynamo(item)) if item else None

    def list_by_status(
        self, status: JobStatus, *, since: str | None = None, limit: int | None = None
    ) -> Iterator[JobRecord]:
        """Jobs in a status, newest first, optionally created at or after `since` (ISO 8601)."""
        condition: ConditionBase = Key(names.STATUS_INDEX_PK).eq(status.value)
        if since:
            condition = condition & Key(names.STATUS_INDEX_SK).gte(since)
        kwargs: dict[str, Any] = {
            "IndexName": names.STATUS_INDEX,
            "KeyConditionExpression": condition,
            "ScanIndexForward": False,
        }
        yielded = 0
        while True:
            page = self._table.query(**kwargs)
            for item in page.get("Items", []):
                yield cast("JobRecord", from_dynamo(item))
                yielded += 1
                if limit is not None and yielded >= limit:
                    return
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def delete(self, job_id: str) -> None:
        """Remove a job's record (`idp delete`: an operator's, never a function's)."""
        self._table.delete_item(Key={names.JOB_ID_ATTR: job_id})

    def ids_starting_with(self, prefix: str) -> list[str]:
        """The ids of the jobs whose id starts with `prefix` (a scan: for people, not paths)."""
        kwargs: dict[str, Any] = {
            "FilterExpression": Attr(names.JOB_ID_ATTR).begins_with(prefix),
            "ProjectionExpression": names.JOB_ID_ATTR,
        }
        ids: list[str] = []
        while True:
            page = self._table.scan(**kwargs)
            ids += [str(item[names.JOB_ID_ATTR]) for item in page.get("Items", [])]
            if "LastEvaluatedKey" not in page:
                return ids
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def list_all(self, *, since: str | None = None) -> list[JobRecord]:
        jobs = [job for status in JobStatus for job in self.list_by_status(status, since=since)]
        return sorted(jobs, key=lambda job: str(job.get("created_at", "")), reverse=True)
