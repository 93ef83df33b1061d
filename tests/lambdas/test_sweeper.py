"""The stale-job sweeper: jobs stuck past every deadline end FAILED; live jobs are left alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from idp.aws.telemetry import Telemetry
from idp.contract.errors import StaleJob
from idp.contract.names import JobStatus
from idp.jobstore.store import JobStore
from lambdas.sweeper.sweep import StaleJobSweeper
from tests.job_records import create_queued_job
from tests.lambdas.support import TEST_LOGGER, EmulatedAws

LIMITS = {JobStatus.PROCESSING: timedelta(hours=1), JobStatus.QUEUED: timedelta(hours=8)}


def _sweeper(store: JobStore) -> StaleJobSweeper:
    return StaleJobSweeper(
        store=store,
        stale_after=LIMITS,
        telemetry=Telemetry(namespace="PaddleIdpTest", service="sweeper"),
        logger=TEST_LOGGER,
    )


def _job(store: JobStore, job_id: str, *, processing: bool = False) -> None:
    create_queued_job(store, job_id, input_key=f"input/{job_id}.png")
    if processing:
        assert store.mark_processing(job_id)


def test_jobs_idle_past_their_deadline_end_failed_stale(aws: EmulatedAws) -> None:
    # GIVEN a job stuck PROCESSING and one stuck QUEUED, both created now
    _job(aws.store, "stuck-processing", processing=True)
    _job(aws.store, "stuck-queued")

    # WHEN the sweeper runs nine hours later
    report = _sweeper(aws.store).sweep(now=datetime.now(UTC) + timedelta(hours=9))

    # THEN both end FAILED with STALE_JOB and a message saying what happened
    assert sorted(report.failed) == ["stuck-processing", "stuck-queued"]
    for job_id in report.failed:
        record = aws.store.get(job_id)
        assert record is not None
        assert record["status"] == JobStatus.FAILED
        assert record["error"]["code"] == "STALE_JOB"
        assert "without progress" in record["error"]["message"]


def test_jobs_within_their_deadline_are_left_alone(aws: EmulatedAws) -> None:
    # GIVEN a job PROCESSING for two hours would be stale, one QUEUED for two hours would not
    _job(aws.store, "slow-processing", processing=True)
    _job(aws.store, "waiting")

    # WHEN the sweeper runs two hours later
    report = _sweeper(aws.store).sweep(now=datetime.now(UTC) + timedelta(hours=2))

    # THEN only the PROCESSING one is ended; the queued one keeps waiting
    assert report.failed == ["slow-processing"]
    waiting = aws.store.get("waiting")
    assert waiting is not None
    assert waiting["status"] == JobStatus.QUEUED


def test_a_job_that_moved_since_it_was_read_is_not_swept(aws: EmulatedAws) -> None:
    # GIVEN a job read at one moment, then touched by its worker
    _job(aws.store, "moving")
    seen = aws.store.get("moving")
    assert seen is not None
    assert aws.store.mark_processing("moving")

    # WHEN a sweep acts on the old view
    swept = aws.store.mark_stale(
        "moving", StaleJob("stale view"), last_updated_at=str(seen["updated_at"])
    )

    # THEN nothing changes: the conditional write refuses it
    assert swept is False
    record = aws.store.get("moving")
    assert record is not None
    assert record["status"] == JobStatus.PROCESSING
