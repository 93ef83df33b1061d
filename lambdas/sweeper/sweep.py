"""Find jobs stuck in QUEUED or PROCESSING past any legitimate deadline and end them FAILED.

Every other path ends a job by itself (the processor, the on-failure destination, the
completion handler); the sweep is the safety net for what none of them can see: a lost
notification, a message parked in the DLQ, an endpoint request that expired unnoticed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from idp.contract.errors import StaleJob
from idp.contract.names import JobStatus
from idp.contract.timestamps import parse_timestamp

if TYPE_CHECKING:
    from aws_lambda_powertools import Logger

    from idp.aws.telemetry import Telemetry
    from idp.jobstore.store import JobStore


@dataclass
class SweepReport:
    examined: int = 0
    failed: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class StaleJobSweeper:
    """Ends FAILED the jobs idle longer than `stale_after` allows for their status."""

    store: JobStore
    stale_after: dict[JobStatus, timedelta]
    telemetry: Telemetry
    logger: Logger

    def sweep(self, now: datetime | None = None) -> SweepReport:
        now = now or datetime.now(UTC)
        report = SweepReport()
        for status, limit in self.stale_after.items():
            for job in self.store.list_by_status(status):
                report.examined += 1
                updated_at = str(job.get("updated_at") or job.get("created_at"))
                idle = now - parse_timestamp(updated_at)
                if idle <= limit:
                    continue
                error = StaleJob(
                    f"the job stayed {status.value} for {idle.total_seconds():.0f} s without "
                    f"progress (limit {limit.total_seconds():.0f} s); no worker is on it any "
                    "more. Submit it again."
                )
                # Conditional on updated_at: a job that moved meanwhile is left alone.
                if self.store.mark_stale(job["job_id"], error, last_updated_at=updated_at):
                    report.failed.append(job["job_id"])
                    self.telemetry.job_failed(error.code)
                    self.logger.warning(
                        "stale job failed", extra={"job_id": job["job_id"], "status": status}
                    )
        return report
