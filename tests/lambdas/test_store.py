"""The status store: conditional transitions on the emulated DynamoDB table."""

from __future__ import annotations

import time
from typing import Any

from idp.errors import CorruptDocument, UnsupportedModel
from idp.names import JobStatus, OcrModel
from idp.store import JobStore
from tests.lambdas.support import INPUT_BUCKET, EmulatedAws


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


def test_a_job_is_created_once(aws: EmulatedAws) -> None:
    # GIVEN a created job
    assert create(aws.store)

    # WHEN the same job is created again (a redelivery)
    again = create(aws.store, lang="fr")

    # THEN the second create is refused and the first record stands
    assert again is False
    job = aws.job("job-1")
    assert (job["status"], job["lang"], job["backend"]) == ("QUEUED", "en", "lambda")
    assert job["options"] == {"pdf_scale": 2.0}


def test_a_rejected_job_is_created_failed_with_what_the_user_sent(aws: EmulatedAws) -> None:
    # GIVEN an invalid request for an unknown model
    # WHEN it is recorded, twice
    first = aws.store.create_failed(
        job_id="job-2",
        error=UnsupportedModel("unknown OCR model 'tesseract'"),
        model="tesseract",
        lang=None,
        input_bucket=INPUT_BUCKET,
        input_key="a.pdf",
    )
    second = aws.store.create_failed(
        job_id="job-2",
        error=UnsupportedModel("unknown OCR model 'tesseract'"),
        model="tesseract",
        lang=None,
        input_bucket=INPUT_BUCKET,
        input_key="a.pdf",
    )

    # THEN one FAILED record carries the code, the model as sent and a finish time
    assert (first, second) == (True, False)
    job = aws.job("job-2")
    assert (job["status"], job["model"]) == ("FAILED", "tesseract")
    assert job["error"]["code"] == "UNSUPPORTED_MODEL"
    assert job["finished_at"] == job["created_at"]
    [listed] = aws.store.list_by_status(JobStatus.FAILED)
    assert listed["job_id"] == "job-2"


def test_terminal_states_never_regress(aws: EmulatedAws) -> None:
    # GIVEN a job that ran and failed
    create(aws.store)
    assert aws.store.mark_processing("job-1")
    assert aws.store.mark_failed("job-1", CorruptDocument("truncated"))

    # WHEN late transitions arrive
    late = [
        aws.store.mark_processing("job-1"),
        aws.store.mark_completed("job-1", result_uri="s3://r/k", page_count=1, timings_ms={}),
        aws.store.mark_failed("job-1", CorruptDocument("again")),
        aws.store.claim_dispatch("job-1"),
    ]

    # THEN every one is refused and the job stays FAILED with its first error
    assert late == [False, False, False, False]
    job = aws.job("job-1")
    assert (job["status"], job["error"]["message"], job["attempts"]) == ("FAILED", "truncated", 1)


def test_only_one_claim_wins_until_it_is_released(aws: EmulatedAws) -> None:
    # GIVEN a queued job claimed once
    create(aws.store)
    assert aws.store.claim_dispatch("job-1")

    # WHEN another delivery tries, then the holder releases after a failure, then it retries
    second = aws.store.claim_dispatch("job-1")
    aws.store.release_dispatch("job-1", reason="Invoke: ThrottlingException: Rate exceeded")
    third = aws.store.claim_dispatch("job-1")

    # THEN only the claim after the release succeeds, and the failure is on the record
    assert (second, third) == (False, True)
    job = aws.job("job-1")
    assert job["dispatch_failures"] == 1
    assert "ThrottlingException" in job["last_dispatch_error"]


def test_an_expired_unconfirmed_claim_can_be_taken_over_but_a_confirmed_one_cannot(
    aws: EmulatedAws,
) -> None:
    # GIVEN two jobs claimed with leases that have run out; only the second was confirmed
    create(aws.store, "job-a")
    create(aws.store, "job-b")
    assert aws.store.claim_dispatch("job-a", lease_seconds=0)
    assert aws.store.claim_dispatch("job-b", lease_seconds=0)
    aws.store.record_dispatch("job-b", dispatch_target="lambda:processor")
    time.sleep(0.01)

    # WHEN a later delivery tries to claim each
    # THEN it takes the abandoned claim over and leaves the confirmed dispatch alone
    assert aws.store.claim_dispatch("job-a") is True
    assert aws.store.claim_dispatch("job-b") is False
    assert aws.job("job-b")["dispatch_target"] == "lambda:processor"


def test_completion_records_the_result_and_counts_attempts(aws: EmulatedAws) -> None:
    # GIVEN a job the processor picked up twice
    create(aws.store)
    aws.store.mark_processing("job-1")
    aws.store.mark_processing("job-1")

    # WHEN it completes
    done = aws.store.mark_completed(
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


def test_a_retry_of_the_same_invocation_takes_the_job_back_at_once(aws: EmulatedAws) -> None:
    # GIVEN a job taken by invocation A, which then crashed
    create(aws.store)
    assert aws.store.mark_processing("job-1", invocation_id="A", lease_seconds=900)

    # WHEN Lambda retries the same event (same request id)
    retaken = aws.store.mark_processing("job-1", invocation_id="A", lease_seconds=900)

    # THEN the retry proceeds and the attempt is counted
    assert retaken is True
    assert aws.job("job-1")["attempts"] == 2


def test_a_duplicate_delivery_is_refused_while_the_holder_may_still_run(
    aws: EmulatedAws,
) -> None:
    # GIVEN a job held by invocation A for 15 minutes
    create(aws.store)
    assert aws.store.mark_processing("job-1", invocation_id="A", lease_seconds=900)

    # WHEN a second delivery of the event (invocation B) arrives
    duplicate = aws.store.mark_processing("job-1", invocation_id="B", lease_seconds=900)

    # THEN it is refused: one OCR run at a time
    assert duplicate is False
    job = aws.job("job-1")
    assert (job["attempts"], job["processing_invocation"]) == (1, "A")


def test_a_duplicate_takes_over_once_the_holders_lease_has_run_out(aws: EmulatedAws) -> None:
    # GIVEN a job whose holder's lease has expired (the holder died)
    create(aws.store)
    assert aws.store.mark_processing("job-1", invocation_id="A", lease_seconds=0)
    time.sleep(0.01)

    # WHEN another invocation arrives
    taken = aws.store.mark_processing("job-1", invocation_id="B", lease_seconds=900)

    # THEN it takes the job over
    assert taken is True
    assert aws.job("job-1")["processing_invocation"] == "B"


# -- chunked documents ---------------------------------------------------------------------------
def fanned_out(store: JobStore, *, chunks: int = 3, pages: int = 25) -> None:
    create(store)
    assert store.mark_processing("job-1")
    assert store.start_chunks(
        "job-1", pages_total=pages, chunks_total=chunks, chunk_pages=10, invocation_id="inv-a"
    )


def test_only_one_invocation_fans_a_job_out(aws: EmulatedAws) -> None:
    # GIVEN a job fanned out by invocation A
    fanned_out(aws.store)

    # WHEN A's retry and a duplicate delivery B try again
    retry = aws.store.start_chunks(
        "job-1", pages_total=25, chunks_total=3, chunk_pages=10, invocation_id="inv-a"
    )
    duplicate = aws.store.start_chunks(
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


def test_a_chunk_counts_once_however_often_it_is_delivered(aws: EmulatedAws) -> None:
    # GIVEN a fanned-out job
    fanned_out(aws.store)

    # WHEN chunk 1 is committed twice and chunk 0 once
    first = aws.store.commit_chunk("job-1", chunk_index=1, pages=10)
    again = aws.store.commit_chunk("job-1", chunk_index=1, pages=10)
    other = aws.store.commit_chunk("job-1", chunk_index=0, pages=10)

    # THEN the repeat is refused and the counts are exact
    assert first is not None
    assert again is None
    assert other is not None
    assert (other["chunks_done"], other["pages_done"]) == (2, 20)
    job = aws.job("job-1")
    assert job["chunks_committed"] == [0, 1]
    assert job["page_progress"] == {"0": 10, "1": 10}


def test_progress_is_recorded_per_chunk(aws: EmulatedAws) -> None:
    fanned_out(aws.store)
    assert aws.store.record_progress("job-1", chunk_index=2, pages_read=3)
    assert aws.store.record_progress("job-1", chunk_index=0, pages_read=7)
    assert aws.job("job-1")["page_progress"] == {"2": 3, "0": 7}


def test_the_merge_is_claimed_once_all_chunks_count_and_by_one_invocation(
    aws: EmulatedAws,
) -> None:
    # GIVEN a job with two chunks, one counted
    fanned_out(aws.store, chunks=2, pages=20)
    aws.store.commit_chunk("job-1", chunk_index=0, pages=10)

    # WHEN a merge is tried early, then after the last chunk, by two invocations
    early = aws.store.claim_merge("job-1", invocation_id="inv-x", lease_seconds=60)
    aws.store.commit_chunk("job-1", chunk_index=1, pages=10)
    claimed = aws.store.claim_merge("job-1", invocation_id="inv-x", lease_seconds=60)
    rival = aws.store.claim_merge("job-1", invocation_id="inv-y", lease_seconds=60)
    retried = aws.store.claim_merge("job-1", invocation_id="inv-x", lease_seconds=60)

    # THEN only the holder (and its retry) merges, and only once every chunk counted
    assert (early, claimed, rival, retried) == (False, True, False, True)


def test_a_merge_lease_that_ran_out_can_be_taken_over(aws: EmulatedAws) -> None:
    fanned_out(aws.store, chunks=1, pages=11)
    aws.store.commit_chunk("job-1", chunk_index=0, pages=11)
    assert aws.store.claim_merge("job-1", invocation_id="inv-x", lease_seconds=0)
    time.sleep(0.01)
    assert aws.store.claim_merge("job-1", invocation_id="inv-y", lease_seconds=60)


def test_no_chunk_counts_after_the_job_ended(aws: EmulatedAws) -> None:
    fanned_out(aws.store)
    aws.store.mark_failed("job-1", CorruptDocument("PDF page 12 cannot be rendered"))
    assert aws.store.commit_chunk("job-1", chunk_index=0, pages=10) is None
    assert aws.store.claim_merge("job-1", invocation_id="inv-x", lease_seconds=60) is False
