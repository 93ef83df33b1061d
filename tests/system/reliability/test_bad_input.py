"""Bad input on the local pipeline: each kind ends FAILED once, with its own code and message.

All bad inputs are sent at once (as a user's folder of mixed files would arrive), then each test
checks one kind's final job record: status, error code, message, attempts and how often the
processor ran. Messages that cannot name a job must reach the DLQ after the queue's redrive
count, not loop forever, and leave no job record. The worker must then still complete a good job.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from devkit import hostile, synthetic
from idp.contract import names
from idp.contract.job_record import JobRecord
from idp.contract.names import JobStatus, OcrModel
from idp.contract.topology import QUEUE_MAX_RECEIVE_COUNT
from tests.local_runs import wait_for
from tests.system.reliability.conftest import (
    MAX_INPUT_BYTES,
    MAX_PAGES,
    Reliability,
    good_page_png,
)

pytestmark = pytest.mark.ocr

DLQ_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class BadFile:
    """A file a user uploads that cannot be OCR'd, and how the pipeline must answer it."""

    name: str  # the file name the user gave it (its extension may lie)
    data: Callable[[], bytes]
    code: str
    message_parts: tuple[str, ...]
    at_admission: bool = False  # the invoker refuses it before any processor run


def _page(text: str = "Quarterly report") -> Image.Image:
    return synthetic.render_page([text], size=(420, 80), font_size=24, margin=20)


BAD_FILES: dict[str, BadFile] = {
    "zero-byte-file": BadFile(
        "scan.png", lambda: b"", "EMPTY_INPUT", ("empty", "0 bytes"), at_admission=True
    ),
    "truncated-pdf": BadFile(
        "report.pdf",
        lambda: synthetic.truncated(synthetic.pdf_pages([_page(), _page()])),
        "CORRUPT_DOCUMENT",
        ("truncated",),
    ),
    "encrypted-pdf": BadFile(
        "secret.pdf", synthetic.encrypted_pdf, "ENCRYPTED_DOCUMENT", ("encrypted", "password")
    ),
    "zero-page-pdf": BadFile("empty.pdf", synthetic.empty_pdf, "NO_PAGES", ("no pages",)),
    "text-named-pdf": BadFile(
        "notes.pdf", synthetic.text_file, "UNSUPPORTED_MEDIA_TYPE", ("plain text", "PDF, PNG")
    ),
    "html-named-png": BadFile(
        "page.png", synthetic.html_file, "UNSUPPORTED_MEDIA_TYPE", ("HTML", "PDF, PNG")
    ),
    "zip-named-docx": BadFile(
        "letter.docx", synthetic.zip_archive, "UNSUPPORTED_MEDIA_TYPE", ("ZIP", "no Office")
    ),
    "gif": BadFile("logo.gif", synthetic.gif_image, "UNSUPPORTED_MEDIA_TYPE", ("GIF",)),
    "decompression-bomb-png": BadFile(
        "bomb.png",
        lambda: synthetic.bomb_png(30_000, 30_000),
        "IMAGE_TOO_LARGE",
        ("too large", "pixels"),
    ),
    # 203 bytes that once took a worker down three times (the page classifier's input).
    "strip-60000x2-png": BadFile(
        "strip.png",
        lambda: hostile.raster("PNG", "L", 60000, 2, ink="blank"),
        "IMAGE_SHAPE_UNSUPPORTED",
        ("60000×2", "too thin"),
    ),
    "page-too-large-after-rasterization": BadFile(
        "poster.pdf",
        synthetic.oversized_page_pdf,
        "IMAGE_TOO_LARGE",
        ("28800×28800", "limit"),
    ),
    "pdf-over-page-limit": BadFile(
        "book.pdf",
        lambda: synthetic.text_pdf([[f"Page {n}"] for n in range(1, MAX_PAGES + 2)]),
        "TOO_MANY_PAGES",
        (f"{MAX_PAGES + 1} pages", f"limit is {MAX_PAGES}"),
    ),
    "oversized-file": BadFile(
        "huge.png",
        lambda: b"\x89PNG\r\n\x1a\n" + b"\x00" * MAX_INPUT_BYTES,
        "INPUT_TOO_LARGE",
        (f"limit is {MAX_INPUT_BYTES} bytes",),
        at_admission=True,
    ),
}


@dataclass(frozen=True)
class BadMessage:
    """A job message whose request is wrong although it names an input."""

    code: str
    message_parts: tuple[str, ...]
    at_admission = True  # the invoker refuses every one of them


BAD_MESSAGES: dict[str, BadMessage] = {
    "unknown-model": BadMessage("UNSUPPORTED_MODEL", ("PP-OCRv99", "use one of")),
    "unknown-language": BadMessage("UNSUPPORTED_LANGUAGE", ("klingon", "PaddleOCR code")),
    "input-key-does-not-exist": BadMessage("INPUT_NOT_FOUND", ("does not exist",)),
    "unknown-model-in-s3-key": BadMessage("UNSUPPORTED_MODEL", ("NoSuchModel", "use one of")),
}

BAD_INPUTS: dict[str, BadFile | BadMessage] = {**BAD_FILES, **BAD_MESSAGES}

# Bodies that cannot name a job at all: no job record, retried by SQS, then dead-lettered.
UNNAMEABLE: dict[str, str] = {
    "malformed-json": '{"bucket": "paddle-idp-local-input", "key": "a.png", "model": ',
    "missing-fields": json.dumps({"model": "PP-OCRv5", "lang": "en", "note": "no bucket/key"}),
}


@dataclass
class Batch:
    """What the module sent, and what the pipeline made of it."""

    job_ids: dict[str, str]  # case → job id
    existing_ids: set[str]  # job records present before the batch
    records: dict[str, JobRecord]  # job id → final record


@pytest.fixture(scope="module")
def batch(reliability: Reliability, tmp_path_factory: pytest.TempPathFactory) -> Batch:
    """Send every bad input at once and wait until each job is terminal."""
    client = reliability.client
    existing = {job[names.JOB_ID_ATTR] for job in client.jobs()}
    folder = tmp_path_factory.mktemp("bad-input")
    job_ids: dict[str, str] = {}

    for case, bad in BAD_FILES.items():
        path = folder / case / bad.name
        path.parent.mkdir()
        path.write_bytes(bad.data())
        job_ids[case] = client.submit(path, model=OcrModel.PP_OCRV5).job_id

    good_key = "uploads/reliability/good-page.png"
    reliability.put_input(good_key, good_page_png("A readable page for a bad request"))
    job_ids["unknown-model"] = "bad-unknown-model"
    reliability.send(
        reliability.direct_message(good_key, job_id="bad-unknown-model", model="PP-OCRv99")
    )
    job_ids["unknown-language"] = "bad-unknown-language"
    reliability.send(
        reliability.direct_message(good_key, job_id="bad-unknown-language", lang="klingon")
    )
    job_ids["input-key-does-not-exist"] = "bad-missing-input"
    reliability.send(
        reliability.direct_message(
            "uploads/reliability/never-uploaded.pdf", job_id="bad-missing-input"
        )
    )
    s3_key = "input/NoSuchModel/scan.png"
    reliability.put_input(s3_key, good_page_png("Sent to a model that does not exist"))
    for body in UNNAMEABLE.values():
        reliability.send(body)

    # The upload under input/ names its job only through the S3 event: find it by its key.
    def s3_job() -> str | None:
        return next(
            (j[names.JOB_ID_ATTR] for j in client.jobs() if j.get("input_key") == s3_key), None
        )

    wait_for(lambda: s3_job() is not None, timeout_s=60, what="the job of the S3 upload")
    job_ids["unknown-model-in-s3-key"] = str(s3_job())
    records = reliability.wait_terminal(list(job_ids.values()))
    return Batch(job_ids=job_ids, existing_ids=existing, records=records)


@pytest.fixture(scope="module")
def dead_letters(reliability: Reliability, batch: Batch) -> dict[str, dict[str, Any]]:
    """The DLQ messages whose bodies are the unnameable messages sent (waits for both)."""
    sqs, dlq = reliability.sqs, reliability.resources.dlq_url
    wanted = {body: case for case, body in UNNAMEABLE.items()}
    found: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + DLQ_TIMEOUT_S
    while len(found) < len(wanted) and time.monotonic() < deadline:
        response = sqs.receive_message(
            QueueUrl=dlq, MaxNumberOfMessages=10, WaitTimeSeconds=1, AttributeNames=["All"]
        )
        for message in response.get("Messages", []):
            if message["Body"] in wanted:
                found[wanted[message["Body"]]] = message
            sqs.delete_message(QueueUrl=dlq, ReceiptHandle=message["ReceiptHandle"])
    return found


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_file_or_request_ends_failed_with_its_code(
    reliability: Reliability, batch: Batch, case: str
) -> None:
    # GIVEN a file a user uploaded that cannot be OCR'd, or a message that names an input but
    # asks for something the pipeline cannot do (sent with all the others at once)
    bad = BAD_INPUTS[case]
    job_id = batch.job_ids[case]

    # WHEN the pipeline has finished with it
    record = batch.records[job_id]

    # THEN the job is FAILED with the kind's stable code and a message that says what is wrong
    _assert_failed_once(reliability, record, bad.code, bad.message_parts)
    # AND it was refused before any OCR work when the invoker could tell (a bad request always
    # can), else run exactly once
    expected_runs = 0 if bad.at_admission else 1
    assert record["attempts"] == expected_runs
    assert reliability.runtime.stats.processor_events[job_id] == expected_runs


@pytest.mark.parametrize("case", list(UNNAMEABLE))
def test_message_naming_no_job_goes_to_the_dlq(
    reliability: Reliability, dead_letters: dict[str, dict[str, Any]], case: str
) -> None:
    # GIVEN a message that cannot name a job (sent with the batch)
    # WHEN SQS has redelivered it up to the queue's maxReceiveCount
    # THEN it is in the dead-letter queue, unchanged
    assert case in dead_letters, f"{case} did not reach the DLQ within {DLQ_TIMEOUT_S:.0f} s"
    message = dead_letters[case]
    assert message["Body"] == UNNAMEABLE[case]
    receives = int(message["Attributes"]["ApproximateReceiveCount"])
    assert receives >= QUEUE_MAX_RECEIVE_COUNT


def test_unnameable_messages_leave_no_job_record_and_no_retry_loop(
    reliability: Reliability, batch: Batch, dead_letters: dict[str, dict[str, Any]]
) -> None:
    # GIVEN the batch, with both unnameable messages dead-lettered
    assert set(dead_letters) == set(UNNAMEABLE)

    # WHEN the job table and the job queue are inspected
    created = {job[names.JOB_ID_ATTR] for job in reliability.client.jobs()} - batch.existing_ids

    # THEN the only new records are the jobs the batch named, and nothing is left to retry
    assert created == set(batch.job_ids.values())
    wait_for(reliability.queue_drained, timeout_s=30, what="the job queue to drain")


def test_worker_completes_a_good_job_after_the_bad_ones(
    reliability: Reliability, batch: Batch, tmp_path: Path
) -> None:
    # GIVEN the pipeline that just refused every kind of bad input
    assert all(r["status"] == JobStatus.FAILED for r in batch.records.values())
    text = "The worker still serves good documents."
    page = tmp_path / "good.png"
    page.write_bytes(good_page_png(text))

    # WHEN a good page is submitted
    _, record = reliability.run(page)

    # THEN it completes, once, with the page's text
    reliability.assert_completed_once(record, text)


def _assert_failed_once(
    reliability: Reliability, record: JobRecord, code: str, parts: tuple[str, ...]
) -> None:
    assert record["status"] == JobStatus.FAILED, record
    error = record["error"]
    assert error["code"] == code, error
    message = str(error["message"])
    for part in parts:
        assert part.lower() in message.lower(), f"{part!r} not in {message!r}"
    assert "Traceback" not in message
    assert len(message) < 400, "a user reads this message: keep it short"
    assert record.get("finished_at"), "a terminal record carries its finish time"
