"""The status store: conditional transitions on the emulated DynamoDB table."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from moto import mock_aws

from idp.contract import names
from idp.contract.errors import CorruptDocument, UnsupportedModel
from idp.contract.names import JobStatus, OcrModel
from idp.contract.timestamps import iso
from idp.jobstore.store import JobStore
from tests.lambdas.support import INPUT_BUCKET, AwsClients, EmulatedAws


class SteppedClock:
    """The store's clock in these tests: it stands still until the test moves it on."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def aws() -> Iterator[EmulatedAws]:
    """The status table (with the rest of the stack's emulated account) in a fresh moto account."""
    clients = AwsClients.create()  # moto hooks every botocore client, whenever it was created
    with mock_aws(config={"lambda": {"use_docker": False}}):
        yield EmulatedAws.provision(clients)


@pytest.fixture
def clock() -> SteppedClock:
    return SteppedClock()


@pytest.fixture
def store(aws: EmulatedAws, clock: SteppedClock) -> JobStore:
    return JobStore(aws.table, clock=clock)


def create(store: JobStore, job_id: str = "job-1", **overrides: Any) -> bool:
    fields: dict[str, Any] = {
        "job_id": job_id,
        "model": OcrModel.PP_OCRV5,
        "lang": "en",
        "input_bucket": INPUT_BUCKET,
        "input_key": "a.pdf",
        "options": {"pdf_scale": 2.0},
        **overrides,
    }
    return store.create(**fields)


def test_a_record_expires_after_the_retention_and_is_kept_without_one(
    aws: EmulatedAws, clock: SteppedClock
) -> None:
    # GIVEN a store whose records live 30 days, and one that keeps them
    create(JobStore(aws.table, clock=clock, retention_days=30), "kept-30-days")
    JobStore(aws.table, clock=clock, retention_days=30).create_failed(
        job_id="failed-30-days",
        error=UnsupportedModel("no such model"),
        model="PP-OCRv9",
        lang="en",
        input_bucket=INPUT_BUCKET,
        input_key="a.pdf",
    )
    create(JobStore(aws.table, clock=clock), "kept")

    # THEN each record of the first carries the TTL attribute: 30 days on, in epoch seconds
    expires = int((clock() + timedelta(days=30)).timestamp())
    assert aws.job("kept-30-days")[names.EXPIRES_AT_ATTR] == expires
    assert aws.job("failed-30-days")[names.EXPIRES_AT_ATTR] == expires
    # AND the other's carries none: DynamoDB keeps it
    assert names.EXPIRES_AT_ATTR not in aws.job("kept")


def test_a_job_is_created_once(aws: EmulatedAws, store: JobStore) -> None:
    # GIVEN a created job
    assert create(store)

    # WHEN the same job is created again (a redelivery)
    again = create(store, lang="fr")

    # THEN the second create is refused and the first record stands
    assert again is False
    job = aws.job("job-1")
    assert (job["status"], job["lang"], job["backend"]) == ("QUEUED", "en", "lambda")
    assert job["options"] == {"pdf_scale": 2.0}


def test_a_rejected_job_is_created_failed_with_what_the_user_sent(
    aws: EmulatedAws, store: JobStore
) -> None:
    # GIVEN an invalid request for an unknown model
    rejected: dict[str, Any] = {
        "job_id": "job-2",
        "error": UnsupportedModel("unknown OCR model 'tesseract'"),
        "model": "tesseract",
        "lang": None,
        "input_bucket": INPUT_BUCKET,
        "input_key": "a.pdf",
    }

    # WHEN it is recorded, twice
    first, second = (store.create_failed(**rejected) for _ in range(2))

    # THEN one FAILED record carries the code, the model as sent and a finish time
    assert (first, second) == (True, False)
    job = aws.job("job-2")
    assert (job["status"], job["model"]) == ("FAILED", "tesseract")
    assert job["error"]["code"] == "UNSUPPORTED_MODEL"
    assert job["finished_at"] == job["created_at"]
    [listed] = store.list_by_status(JobStatus.FAILED)
    assert listed["job_id"] == "job-2"


def test_terminal_states_never_regress(aws: EmulatedAws, store: JobStore) -> None:
    # GIVEN a job that ran and failed
    create(store)
    assert store.mark_processing("job-1")
    assert store.mark_failed("job-1", CorruptDocument("truncated"))

    # WHEN late transitions arrive
    late = [
        store.mark_processing("job-1"),
        store.mark_completed("job-1", result_uri="s3://r/k", page_count=1, timings_ms={}),
        store.mark_failed("job-1", CorruptDocument("again")),
        store.claim_dispatch("job-1"),
    ]

    # THEN every one is refused and the job stays FAILED with its first error
    assert late == [False, False, False, False]
    job = aws.job("job-1")
    assert (job["status"], job["error"]["message"], job["attempts"]) == ("FAILED", "truncated", 1)


def test_the_store_dates_what_it_writes_by_its_clock(
    aws: EmulatedAws, store: JobStore, clock: SteppedClock
) -> None:
    # GIVEN a job created at the clock's time
    create(store)
    created = clock.now

    # WHEN an invocation takes it an hour later, for 15 minutes
    clock.advance(3600)
    assert store.mark_processing("job-1", invocation_id="A", lease_seconds=900)

    # THEN each timestamp and the lease are the clock's
    job = aws.job("job-1")
    assert job["created_at"] == iso(created)
    assert job["started_at"] == job["updated_at"] == iso(clock.now)
    assert job["processing_lease_until"] == iso(clock.now + timedelta(seconds=900))


def test_only_one_claim_wins_until_it_is_released(aws: EmulatedAws, store: JobStore) -> None:
    # GIVEN a queued job claimed once
    create(store)
    assert store.claim_dispatch("job-1")

    # WHEN another delivery tries, then the holder releases after a failure, then it retries
    second = store.claim_dispatch("job-1")
    store.release_dispatch("job-1", reason="Invoke: ThrottlingException: Rate exceeded")
    third = store.claim_dispatch("job-1")

    # THEN only the claim after the release succeeds, and the failure is on the record
    assert (second, third) == (False, True)
    job = aws.job("job-1")
    assert job["dispatch_failures"] == 1
    assert "ThrottlingException" in job["last_dispatch_error"]


def test_an_expired_unconfirmed_claim_can_be_taken_over_but_a_confirmed_one_cannot(
    aws: EmulatedAws, store: JobStore, clock: SteppedClock
) -> None:
    # GIVEN two jobs claimed with leases that have run out; only the second was confirmed
    create(store, "job-a")
    create(store, "job-b")
    assert store.claim_dispatch("job-a", lease_seconds=60)
    assert store.claim_dispatch("job-b", lease_seconds=60)
    store.record_dispatch("job-b", dispatch_target="lambda:processor")
    clock.advance(61)

    # WHEN a later delivery tries to claim each
    # THEN it takes the abandoned claim over and leaves the confirmed dispatch alone
    assert store.claim_dispatch("job-a") is True
    assert store.claim_dispatch("job-b") is False
    assert aws.job("job-b")["dispatch_target"] == "lambda:processor"


def test_completion_records_the_result_and_counts_attempts(
    aws: EmulatedAws, store: JobStore
) -> None:
    # GIVEN a job the processor picked up twice
    create(store)
    store.mark_processing("job-1")
    store.mark_processing("job-1")

    # WHEN it completes
    done = store.mark_completed(
        "job-1",
        result_uri="s3://r/results/job-1/result.json",
        page_count=3,
        timings_ms={"total": 1234.5},
    )

    # THEN the record has the result, the pages, the timings and two attempts
    assert done
    job = aws.job("job-1")
    assert (job["status"], job["page_count"], job["attempts"]) == ("COMPLETED", 3, 2)
    assert job["timings_ms"] == {"total": 1234.5}
    assert "finished_at" in job


@pytest.mark.parametrize(
    ("arriving", "seconds_later", "taken", "holder", "attempts"),
    [
        # Lambda retries the crashed holder's event (same request id): it takes the job back.
        pytest.param("A", 0, True, "A", 2, id="a-retry-takes-the-job-back-at-once"),
        # A duplicate delivery while the holder may still run: one OCR run at a time.
        pytest.param("B", 0, False, "A", 1, id="a-duplicate-is-refused-while-held"),
        # The holder died: once its lease has run out, the duplicate takes the job over.
        pytest.param("B", 901, True, "B", 2, id="a-duplicate-takes-over-an-expired-lease"),
    ],
)
def test_a_processing_job_is_held_by_one_invocation_for_its_lease(
    aws: EmulatedAws,
    store: JobStore,
    clock: SteppedClock,
    arriving: str,
    seconds_later: int,
    taken: bool,
    holder: str,
    attempts: int,
) -> None:
    # GIVEN a job taken by invocation A for 15 minutes
    create(store)
    assert store.mark_processing("job-1", invocation_id="A", lease_seconds=900)
    clock.advance(seconds_later)

    # WHEN an invocation arrives for it
    result = store.mark_processing("job-1", invocation_id=arriving, lease_seconds=900)

    # THEN it proceeds only when it is the holder or the holder's lease ran out
    assert result is taken
    job = aws.job("job-1")
    assert (job["attempts"], job["processing_invocation"]) == (attempts, holder)


# -- chunked documents ---------------------------------------------------------------------------
def fanned_out(store: JobStore, *, chunks: int = 3, pages: int = 25) -> None:
    create(store)
    assert store.mark_processing("job-1")
    assert store.start_chunks(
        "job-1", pages_total=pages, chunks_total=chunks, chunk_pages=10, invocation_id="inv-a"
    )


def test_only_one_invocation_fans_a_job_out(aws: EmulatedAws, store: JobStore) -> None:
    # GIVEN a job fanned out by invocation A
    fanned_out(store)

    # WHEN A's retry and a duplicate delivery B try again
    retry = store.start_chunks(
        "job-1", pages_total=25, chunks_total=3, chunk_pages=10, invocation_id="inv-a"
    )
    duplicate = store.start_chunks(
        "job-1", pages_total=25, chunks_total=3, chunk_pages=10, invocation_id="inv-b"
    )

    # THEN the retry may redo it, the duplicate may not, and the counters start at 0
    assert (retry, duplicate) == (True, False)
    job = aws.job("job-1")
    assert (job["pages_total"], job["chunks_total"], job["chunks_done"], job["pages_done"]) == (
        25,
        3,
        0,
        0,
    )


def test_a_chunk_counts_once_however_often_it_is_delivered(
    aws: EmulatedAws, store: JobStore
) -> None:
    # GIVEN a fanned-out job
    fanned_out(store)

    # WHEN chunk 1 is committed twice and chunk 0 once
    first = store.commit_chunk("job-1", chunk_index=1, pages=10)
    again = store.commit_chunk("job-1", chunk_index=1, pages=10)
    other = store.commit_chunk("job-1", chunk_index=0, pages=10)

    # THEN the repeat is refused and the counts are exact
    assert first is not None
    assert again is None
    assert other is not None
    assert (other["chunks_done"], other["pages_done"]) == (2, 20)
    job = aws.job("job-1")
    assert job["chunks_committed"] == [0, 1]
    assert job["page_progress"] == {"0": 10, "1": 10}


def test_progress_is_recorded_per_chunk(aws: EmulatedAws, store: JobStore) -> None:
    fanned_out(store)
    assert store.record_progress("job-1", chunk_index=2, pages_read=3)
    assert store.record_progress("job-1", chunk_index=0, pages_read=7)
    assert aws.job("job-1")["page_progress"] == {"2": 3, "0": 7}


def test_the_merge_is_claimed_once_all_chunks_count_and_by_one_invocation(store: JobStore) -> None:
    # GIVEN a job with two chunks, one counted
    fanned_out(store, chunks=2, pages=20)
    store.commit_chunk("job-1", chunk_index=0, pages=10)

    # WHEN a merge is tried early, then after the last chunk, by two invocations
    early = store.claim_merge("job-1", invocation_id="inv-x", lease_seconds=60)
    store.commit_chunk("job-1", chunk_index=1, pages=10)
    claimed = store.claim_merge("job-1", invocation_id="inv-x", lease_seconds=60)
    rival = store.claim_merge("job-1", invocation_id="inv-y", lease_seconds=60)
    retried = store.claim_merge("job-1", invocation_id="inv-x", lease_seconds=60)

    # THEN only the holder (and its retry) merges, and only once every chunk counted
    assert (early, claimed, rival, retried) == (False, True, False, True)


def test_a_merge_lease_that_ran_out_can_be_taken_over(store: JobStore, clock: SteppedClock) -> None:
    fanned_out(store, chunks=1, pages=11)
    store.commit_chunk("job-1", chunk_index=0, pages=11)
    assert store.claim_merge("job-1", invocation_id="inv-x", lease_seconds=60)
    clock.advance(61)
    assert store.claim_merge("job-1", invocation_id="inv-y", lease_seconds=60)


def test_no_chunk_counts_after_the_job_ended(store: JobStore) -> None:
    fanned_out(store)
    store.mark_failed("job-1", CorruptDocument("PDF page 12 cannot be rendered"))
    assert store.commit_chunk("job-1", chunk_index=0, pages=10) is None
    assert store.claim_merge("job-1", invocation_id="inv-x", lease_seconds=60) is False
