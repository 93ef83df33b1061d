"""What one invocation of the processor did: its Lambda response."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from idp.contract.names import JobStatus


class InvocationStatus(StrEnum):
    """What one invocation of the processor did: the `status` of its Lambda response."""

    COMPLETED = JobStatus.COMPLETED.value
    FAILED = JobStatus.FAILED.value
    SKIPPED = "SKIPPED"  # terminal, or held by another invocation: a duplicate delivery
    REJECTED = "REJECTED"  # the event is not a DispatchedJob
    FANNED_OUT = "FANNED_OUT"  # the document's chunks were dispatched
    CHUNK_DONE = "CHUNK_DONE"  # a chunk was counted; others are still running
    SUBMITTED = "SUBMITTED"  # a PaddleOCR-VL job was submitted to the endpoint whole


@dataclass(frozen=True)
class InvocationOutcome:
    """What the invocation did; the handler returns it as the Lambda response."""

    job_id: str
    status: InvocationStatus
    result_uri: str | None = None
    error: dict[str, str] | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"job_id": self.job_id, "status": self.status.value}
        if self.result_uri:
            out["result_uri"] = self.result_uri
        if self.error:
            out["error"] = self.error
        if self.timings_ms:
            out["timings_ms"] = self.timings_ms
        return out
