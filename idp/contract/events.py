"""The job-finished event: published once when a job's record turns COMPLETED or FAILED.

The status table's stream is the outbox: the one conditional write that ends a job is the
transition, and the events function (lambdas/events) turns each such stream record into one
EventBridge event on the pipeline's bus, whoever wrote it (processor, merge, completion handler,
invoker, sweeper). Delivery is at least once, as for every stream consumer: `event_id` is the
idempotency key a consumer may rely on; it is the same for every delivery of one transition.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from idp.contract.job_record import JobRecord
from idp.contract.names import JobStatus
from idp.contract.timestamps import parse_timestamp

EVENT_SOURCE: Final = "paddle-idp"  # EventBridge `source`
JOB_FINISHED: Final = "Job Finished"  # EventBridge `detail-type`


class EventError(BaseModel):
    code: str
    message: str


# Fields the event copies from the record as they are (absent: None).
_COPIED_FIELDS: Final = (
    "model", "lang", "input_uri", "result_uri", "markdown_uri", "pdf_uri", "textract_uri",
    "failed_pages",
)  # fmt: skip


class JobFinished(BaseModel):
    """The `detail` of a job-finished event."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal["1"] = "1"
    event_id: str = Field(description="idempotency key: one per terminal transition of a job")
    job_id: str
    status: Literal["COMPLETED", "FAILED"]
    model: str | None = None
    lang: str | None = None
    input_uri: str | None = None
    pages: int | None = Field(default=None, description="pages read (COMPLETED)")
    result_uri: str | None = None  # result.json
    markdown_uri: str | None = None  # result.md (layout models)
    pdf_uri: str | None = None  # result.pdf (the searchable PDF)
    textract_uri: str | None = None  # result.textract.json (Textract-shaped blocks)
    cached: bool = False
    review_pages: list[int] = Field(
        default_factory=list, description="pages whose quality verdict asks a person to look"
    )
    error: EventError | None = None  # FAILED: a stable code and a message
    failed_pages: str | None = None
    created_at: str | None = None
    finished_at: str
    duration_ms: float | None = Field(default=None, description="created_at → finished_at")
    timings_ms: dict[str, float] = Field(default_factory=dict)

    @classmethod
    def from_record(cls, record: JobRecord) -> JobFinished:
        """The event of a terminal record (`finishes_job` said it is one)."""
        finished_at = record.get("finished_at") or record.get("updated_at") or ""
        created_at = record.get("created_at")
        duration = None
        if created_at and finished_at:
            delta = parse_timestamp(finished_at) - parse_timestamp(created_at)
            duration = round(delta.total_seconds() * 1000, 1)
        error = record.get("error")
        return cls(
            event_id=event_id(record["job_id"], record["status"], finished_at),
            job_id=record["job_id"],
            status=JobStatus(record["status"]).value,
            **{name: record.get(name) for name in _COPIED_FIELDS},
            pages=record.get("page_count"),
            cached=bool(record.get("cached", False)),
            review_pages=list(record.get("review_pages", [])),
            error=EventError(**error) if error else None,
            created_at=created_at,
            finished_at=finished_at,
            duration_ms=duration,
            timings_ms=dict(record.get("timings_ms", {})),
        )


def event_id(job_id: str, status: str, finished_at: str) -> str:
    """The same key for every delivery of one transition, a new one for another."""
    return hashlib.sha256(f"{job_id}|{status}|{finished_at}".encode()).hexdigest()[:32]


def finishes_job(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """Is this change of a job's record the one that ended it (active or absent → terminal)?"""
    if new is None or not JobStatus(new["status"]).is_terminal:
        return False
    return old is None or not JobStatus(old["status"]).is_terminal
