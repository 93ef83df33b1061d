"""The job status store over DynamoDB.

Transitions QUEUED → PROCESSING → COMPLETED | FAILED are conditional writes, so a terminal
status never regresses and a duplicate delivery never creates a second job or a second run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

from boto3.dynamodb.conditions import Attr, ConditionBase, Key
from botocore.exceptions import ClientError

from idp import names
from idp.errors import JobError
from idp.names import JobStatus, OcrModel
from idp.timestamps import iso, utc_now

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

_ACTIVE = (JobStatus.QUEUED.value, JobStatus.PROCESSING.value)


# Longer than one invoker run (its timeout), shorter than the queue's visibility timeout, so the
# redelivery that follows a crashed invoker can take the claim over.
DEFAULT_DISPATCH_LEASE_SECONDS: Final = names.DISPATCH_LEASE_SECONDS


def _is_condition_failure(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


def to_dynamo(value: Any) -> Any:
    """DynamoDB takes no floats: turn them (recursively) into Decimals."""
    if isinstance(value, float):
        return Decimal(str(round(value, 3)))
    if isinstance(value, Mapping):
        return {k: to_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_dynamo(v) for v in value]
    return value


def from_dynamo(value: Any) -> Any:
    """Decimals back to int/float so records serialize as plain JSON."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, Mapping):
        return {k: from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_dynamo(v) for v in value]
    if isinstance(value, set | frozenset):  # a number set (chunks_committed)
        return sorted(from_dynamo(v) for v in value)
    return value


def _new_item(
    *,
    job_id: str,
    status: JobStatus,
    model: str,
    lang: str,
    input_bucket: str,
    input_key: str,
    options: Mapping[str, Any] | None,
    object_version: str | None,
) -> dict[str, Any]:
    now = utc_now()
    item: dict[str, Any] = {
        names.JOB_ID_ATTR: job_id,
        "status": status.value,
        "model": model,
        "lang": lang,
        "input_bucket": input_bucket,
        "input_key": input_key,
        "input_uri": f"s3://{input_bucket}/{input_key}",
        "options": dict(options or {}),
        "attempts": 0,
        "created_at": now,
        "updated_at": now,
        "timings_ms": {},
    }
    if object_version:
        item["object_version"] = object_version
    return item


def jobs_table_definition(table_name: str) -> dict[str, Any]:
    """`create_table` arguments for the status table as the stack deploys it (emulator, tests)."""
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": names.JOB_ID_ATTR, "AttributeType": "S"},
            {"AttributeName": names.STATUS_INDEX_PK, "AttributeType": "S"},
            {"AttributeName": names.STATUS_INDEX_SK, "AttributeType": "S"},
        ],
        "KeySchema": [{"AttributeName": names.JOB_ID_ATTR, "KeyType": "HASH"}],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": names.STATUS_INDEX,
                "KeySchema": [
                    {"AttributeName": names.STATUS_INDEX_PK, "KeyType": "HASH"},
                    {"AttributeName": names.STATUS_INDEX_SK, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    }


class JobStore:
    """Reads and transitions job records. Takes its DynamoDB Table; creates no clients."""

    def __init__(self, table: Table) -> None:
        self._table = table

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
        item = _new_item(
            job_id=job_id,
            status=JobStatus.QUEUED,
            model=model.value,
            lang=lang,
            input_bucket=input_bucket,
            input_key=input_key,
            options=options,
            object_version=object_version,
        )
        item["backend"] = model.backend.value
        if content_sha256:
            item["content_sha256"] = content_sha256
        return self._put_new({**item, **fields})

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
        item = _new_item(
            job_id=job_id,
            status=JobStatus.FAILED,
            model=model,
            lang=lang or "",
            input_bucket=input_bucket,
            input_key=input_key,
            options=options,
            object_version=object_version,
        )
        with contextlib.suppress(KeyError):  # an unknown model has no backend
            item["backend"] = OcrModel.parse(model).backend.value
        item["error"] = error.to_record()
        item["finished_at"] = item["created_at"]
        return self._put_new({**item, **fields})

    def _put_new(self, item: Mapping[str, Any]) -> bool:
        try:
            self._table.put_item(
                Item=to_dynamo(dict(item)),
                ConditionExpression=Attr(names.JOB_ID_ATTR).not_exists(),
            )
        except ClientError as exc:
            if _is_condition_failure(exc):
                return False
            raise
        return True

    # -- dispatch claim -------------------------------------------------------------------------
    def claim_dispatch(
        self, job_id: str, *, lease_seconds: int = DEFAULT_DISPATCH_LEASE_SECONDS
    ) -> bool:
        """Take the right to dispatch a QUEUED job; only one concurrent delivery wins.

        The claim is a lease: if its holder dies before confirming (`record_dispatch`) or
        releasing it, a later delivery may take it over once `lease_seconds` have passed, so a
        lost release never strands the job. A confirmed dispatch is never taken over.
        """
        now = datetime.now(UTC)
        return self._update(
            job_id,
            "SET dispatched_at = :now, dispatch_lease_until = :until, updated_at = :now",
            {
                ":now": iso(now),
                ":until": iso(now + timedelta(seconds=lease_seconds)),
                ":queued": JobStatus.QUEUED.value,
            },
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
        values: dict[str, Any] = {":now": utc_now(), ":queued": JobStatus.QUEUED.value}
        if reason is not None:
            expression += ", last_dispatch_error = :reason ADD dispatch_failures :one"
            values.update({":reason": reason[:1000], ":one": 1})
        self._update(job_id, expression, values, condition="#s = :queued")

    def record_dispatch(self, job_id: str, **fields: Any) -> None:
        """Confirm a dispatch and attach its facts (target, inference id, manifest URI).

        Only for a job that is still active; a confirmed claim is never taken over.
        """
        sets = "".join(f", #{k} = :{k}" for k in fields)
        values = {f":{k}": v for k, v in fields.items()}
        self._update(
            job_id,
            f"SET dispatch_confirmed_at = :now, updated_at = :now{sets}",
            {**values, ":now": utc_now(), ":a0": _ACTIVE[0], ":a1": _ACTIVE[1]},
            condition="#s IN (:a0, :a1)",
            extra_names={f"#{k}": k for k in fields},
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
        now = datetime.now(UTC)
        values: dict[str, Any] = {
            ":processing": JobStatus.PROCESSING.value,
            ":now": iso(now),
            ":one": 1,
            ":a0": _ACTIVE[0],
            ":a1": _ACTIVE[1],
            **{f":{k}": v for k, v in fields.items()},
        }
        sets = "".join(f", #{k} = :{k}" for k in fields)
        condition = "#s IN (:a0, :a1)"
        if invocation_id is not None:
            values[":inv"] = invocation_id
            values[":until"] = iso(now + timedelta(seconds=lease_seconds or 0))
            sets += ", processing_invocation = :inv, processing_lease_until = :until"
            condition = (
                "#s = :a0 OR (#s = :a1 AND (attribute_not_exists(processing_invocation) OR "
                "processing_invocation = :inv OR processing_lease_until < :now))"
            )
        return self._update(
            job_id,
            f"SET #s = :processing, started_at = :now, updated_at = :now{sets} ADD attempts :one",
            values,
            condition=condition,
            extra_names={f"#{k}": k for k in fields},
        )

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
        now = utc_now()
        sets = "".join(f", #{k} = :{k}" for k in fields)
        condition = "#s IN (:a0, :a1)"
        values: dict[str, Any] = {
            ":status": status.value,
            ":now": now,
            ":a0": _ACTIVE[0],
            ":a1": _ACTIVE[1],
            **{f":{k}": v for k, v in fields.items()},
        }
        if unchanged_since is not None:
            condition += " AND updated_at = :seen"
            values[":seen"] = unchanged_since
        return self._update(
            job_id,
            f"SET #s = :status, finished_at = :now, updated_at = :now{sets}",
            values,
            condition=condition,
            extra_names={f"#{k}": k for k in fields},
        )

    def _update(
        self,
        job_id: str,
        expression: str,
        values: Mapping[str, Any],
        *,
        condition: str,
        extra_names: Mapping[str, str] | None = None,
    ) -> bool:
        attr_names = {"#s": "status", **(extra_names or {})}
        used_names = {k: v for k, v in attr_names.items() if k in expression or k in condition}
        try:
            self._table.update_item(
                Key={names.JOB_ID_ATTR: job_id},
                UpdateExpression=expression,
                ConditionExpression=f"attribute_exists({names.JOB_ID_ATTR}) AND ({condition})",
                ExpressionAttributeNames=used_names,
                ExpressionAttributeValues=to_dynamo(dict(values)),
            )
        except ClientError as exc:
            if _is_condition_failure(exc):
                return False
            raise
        return True

    # -- chunked documents ----------------------------------------------------------------------
    def start_chunks(
        self,
        job_id: str,
        *,
        pages_total: int,
        chunks_total: int,
        chunk_pages: int,
        invocation_id: str,
    ) -> bool:
        """Claim a job's fan-out and record its totals (counters start at 0).

        Only one invocation fans a job out: its retries (same request id) may redo it, a
        duplicate delivery of the job's event (another invocation) gets False.
        """
        return self._update(
            job_id,
            "SET fan_out_invocation = :inv, "
            "pages_total = :pages, chunks_total = :chunks, chunk_pages = :size, "
            "chunks_done = if_not_exists(chunks_done, :zero), "
            "pages_done = if_not_exists(pages_done, :zero), "
            "page_progress = if_not_exists(page_progress, :empty), updated_at = :now",
            {
                ":pages": pages_total,
                ":chunks": chunks_total,
                ":size": chunk_pages,
                ":zero": 0,
                ":empty": {},
                ":inv": invocation_id,
                ":now": utc_now(),
                ":a0": _ACTIVE[0],
                ":a1": _ACTIVE[1],
            },
            condition=(
                "#s IN (:a0, :a1) AND "
                "(attribute_not_exists(fan_out_invocation) OR fan_out_invocation = :inv)"
            ),
        )

    def claim_submission(self, job_id: str, *, invocation_id: str) -> bool:
        """Take the right to submit a whole document to the VL endpoint.

        One invocation submits: its retries (same request id) may submit again, a duplicate
        delivery of the job's event (another invocation) gets False.
        """
        return self._update(
            job_id,
            "SET submit_invocation = :inv, updated_at = :now",
            {":inv": invocation_id, ":now": utc_now(), ":a0": _ACTIVE[0], ":a1": _ACTIVE[1]},
            condition=(
                "#s IN (:a0, :a1) AND "
                "(attribute_not_exists(submit_invocation) OR submit_invocation = :inv)"
            ),
        )

    def record_fan_out(self, job_id: str, *, timings_ms: Mapping[str, float]) -> bool:
        """What splitting and dispatching the chunks took (the merge adds it to the result)."""
        return self._update(
            job_id,
            "SET fan_out_timings_ms = :timings, updated_at = :now",
            {":timings": dict(timings_ms), ":now": utc_now(), ":a0": _ACTIVE[0], ":a1": _ACTIVE[1]},
            condition="#s IN (:a0, :a1)",
        )

    def record_progress(self, job_id: str, *, chunk_index: int, pages_read: int) -> bool:
        """How many pages of one chunk are OCR'd so far (advisory: for progress bars only)."""
        return self._update(
            job_id,
            "SET page_progress.#chunk = :read, updated_at = :now",
            {":read": pages_read, ":now": utc_now(), ":a0": _ACTIVE[0], ":a1": _ACTIVE[1]},
            condition="#s IN (:a0, :a1) AND attribute_exists(page_progress)",
            extra_names={"#chunk": str(chunk_index)},
        )

    def commit_chunk(self, job_id: str, *, chunk_index: int, pages: int) -> dict[str, Any] | None:
        """Count a finished chunk once: None when it was counted before or the job has ended.

        The chunk's index joins the `chunks_committed` set in the same conditional write that
        adds to `chunks_done` and `pages_done`, so a duplicate or retried delivery of a chunk
        never counts twice. Returns the record as it is after this write.
        """
        try:
            response = self._table.update_item(
                Key={names.JOB_ID_ATTR: job_id},
                UpdateExpression=(
                    "ADD chunks_committed :index_set, chunks_done :one, pages_done :pages "
                    "SET page_progress.#chunk = :pages, updated_at = :now"
                ),
                ConditionExpression=(
                    f"attribute_exists({names.JOB_ID_ATTR}) AND #s IN (:a0, :a1) "
                    "AND NOT contains(chunks_committed, :index)"
                ),
                ExpressionAttributeNames={"#s": "status", "#chunk": str(chunk_index)},
                ExpressionAttributeValues=to_dynamo(
                    {
                        ":index_set": {chunk_index},
                        ":index": chunk_index,
                        ":one": 1,
                        ":pages": pages,
                        ":now": utc_now(),
                        ":a0": _ACTIVE[0],
                        ":a1": _ACTIVE[1],
                    }
                ),
                ReturnValues="ALL_NEW",
            )
        except ClientError as exc:
            if _is_condition_failure(exc):
                return None
            raise
        return dict(from_dynamo(response["Attributes"]))

    def claim_merge(self, job_id: str, *, invocation_id: str, lease_seconds: float) -> bool:
        """Take the right to merge a job whose chunks are all counted; one merger at a time.

        A retry of the same invocation (same request id) takes it back at once, so a merge that
        crashed is redone; another invocation waits until the holder's lease has run out.
        """
        now = datetime.now(UTC)
        return self._update(
            job_id,
            "SET merge_invocation = :inv, merge_lease_until = :until, merge_started_at = :now, "
            "updated_at = :now",
            {
                ":inv": invocation_id,
                ":until": iso(now + timedelta(seconds=lease_seconds)),
                ":now": iso(now),
                ":a0": _ACTIVE[0],
                ":a1": _ACTIVE[1],
            },
            condition=(
                "#s IN (:a0, :a1) AND chunks_done = chunks_total AND "
                "(attribute_not_exists(merge_invocation) OR merge_invocation = :inv OR "
                "merge_lease_until < :now)"
            ),
        )

    # -- queries --------------------------------------------------------------------------------
    def get(self, job_id: str) -> dict[str, Any] | None:
        item = self._table.get_item(Key={names.JOB_ID_ATTR: job_id}, ConsistentRead=True).get(
            "Item"
        )
        return from_dynamo(item) if item else None

    def list_by_status(
        self, status: JobStatus, *, since: str | None = None, limit: int | None = None
    ) -> Iterator[dict[str, Any]]:
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
                yield from_dynamo(item)
                yielded += 1
                if limit is not None and yielded >= limit:
                    return
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def list_all(self, *, since: str | None = None) -> list[dict[str, Any]]:
        jobs = [job for status in JobStatus for job in self.list_by_status(status, since=since)]
        return sorted(jobs, key=lambda job: str(job.get("created_at", "")), reverse=True)
