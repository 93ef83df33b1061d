"""Large documents in chunks under faults: every page once, in order, one merge, no job stuck.

Each test runs the local pipeline with 3-page chunks and two processor workers, and injects its
fault where AWS would fail it: a chunk event delivered twice, the merging environment dying
right after it claimed the merge, a chunk's environment dying on every attempt.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from devkit.local.faults import Faults
from devkit.local.pipeline import LocalPipeline
from devkit.synthetic import encode_pages, pdf_pages, render_page, sample_lines
from devkit.textmetrics import character_error_rate
from idp.contract import names
from idp.contract.job_record import JobRecord
from idp.contract.names import JobStatus, OcrModel
from tests.local_runs import running_chunked_pipeline
from tests.pdftext import pdf_text, read_pages

pytestmark = pytest.mark.ocr

JOB_TIMEOUT_S = 300.0
CHUNK_PAGES = 3


def running(
    tmp_path: Path, models_dir: Path, faults: Faults
) -> AbstractContextManager[LocalPipeline]:
    return running_chunked_pipeline(tmp_path / "work", models_dir, faults, chunk_pages=CHUNK_PAGES)


def _pages(count: int, *, offset: int = 0) -> tuple[list[Image.Image], list[str]]:
    """Small pages of one known line each, different on every page."""
    texts = [f"Page {n + 1}: {line}" for n, line in enumerate(sample_lines(count, offset=offset))]
    images = [render_page([text], size=(1300, 90), font_size=30, margin=20) for text in texts]
    return images, texts


def _pdf(tmp_path: Path, name: str, count: int, *, offset: int = 0) -> tuple[Path, list[str]]:
    """A PDF of `count` such pages, and the text of each."""
    images, texts = _pages(count, offset=offset)
    path = tmp_path / name
    path.write_bytes(pdf_pages(images))
    return path, texts


def _submit(pipeline: LocalPipeline, path: Path) -> JobRecord:
    client = pipeline.client()
    submitted = client.submit(path, model=OcrModel.PP_OCRV5)
    record = client.wait([submitted.job_id], timeout_s=JOB_TIMEOUT_S)[submitted.job_id]
    assert record is not None, "the job was never created"
    assert JobStatus(record["status"]).is_terminal, f"job stuck in {record['status']}"
    return record


def _assert_pages_read_right(
    pipeline: LocalPipeline, record: JobRecord, texts: list[str]
) -> dict[str, Any]:
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    result = pipeline.client().result_document(record["job_id"])
    assert [page["page"] for page in result["pages"]] == list(range(1, len(texts) + 1))
    for page, text in zip(result["pages"], texts, strict=True):
        read = "\n".join(line["text"] for line in page["lines"])
        assert character_error_rate(text, read) <= 0.05, (page["page"], read)
    return result


def _work_objects(pipeline: LocalPipeline, job_id: str) -> list[str]:
    assert pipeline.resources is not None
    listed = pipeline.endpoint.client("s3").list_objects_v2(
        Bucket=pipeline.resources.results_bucket, Prefix=f"{names.WORK_PREFIX}{job_id}/"
    )
    return [item["Key"] for item in listed.get("Contents", [])]


def test_duplicated_chunk_deliveries_count_once_and_the_cache_answers_a_resubmission(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN an 8-page PDF (3 chunks) whose first two chunk events are each delivered twice
    path, texts = _pdf(tmp_path, "eight-pages.pdf", 8)
    with running(tmp_path, models_dir, Faults(duplicate_chunk_events=2)) as pipeline:
        # WHEN it is submitted
        record = _submit(pipeline, path)

        # THEN it completes once with every page in order and read right
        _assert_pages_read_right(pipeline, record, texts)
        assert pipeline.runtime is not None
        job_events = {
            key: count
            for key, count in pipeline.runtime.stats.chunk_events.items()
            if key.startswith(record["job_id"])
        }
        assert sorted(job_events.values()) == [1, 1, 1]
        assert pipeline.runtime.stats.invocations
        assert pipeline.runtime.lambda_faults.duplicate_chunk_events.fired == 2
        # and every count is exact despite the duplicates
        assert (record["pages_total"], record["pages_done"], record["page_count"]) == (8, 8, 8)
        assert (record["chunks_total"], record["chunks_done"]) == (3, 3)
        assert record["chunks_committed"] == [0, 1, 2]
        # and result.pdf is joined from the chunks' parts: 8 pages, each with its text
        result = pipeline.client().result_document(record["job_id"])
        searchable = pipeline.client().download_result(record["job_id"], tmp_path / "out")
        searchable = searchable.with_name(names.RESULT_PDF)
        assert len(read_pages(searchable)) == 8
        for page in result["pages"]:
            read = " ".join(line["text"] for line in page["lines"])
            assert pdf_text(searchable, page["page"]).split() == read.split()
        # and the merge cleaned the partials (and the PDF parts) up
        assert _work_objects(pipeline, record["job_id"]) == []

        # WHEN the same bytes are uploaded again under another name
        again = tmp_path / "same-document.pdf"
        again.write_bytes(path.read_bytes())
        cached = _submit(pipeline, again)

        # THEN the result cache answers without any chunk running
        assert cached["status"] == JobStatus.COMPLETED
        assert cached.get("cached") is True
        assert not any(
            key.startswith(cached["job_id"]) for key in pipeline.runtime.stats.chunk_events
        )
        _assert_pages_read_right(pipeline, cached, texts)


def test_a_merge_that_crashes_is_redone(tmp_path: Path, models_dir: Path) -> None:
    # GIVEN a 7-page PDF whose merging environment dies right after claiming the merge
    path, texts = _pdf(tmp_path, "seven-pages.pdf", 7, offset=3)
    with running(tmp_path, models_dir, Faults(merge_crashes=1)) as pipeline:
        # WHEN it is submitted
        record = _submit(pipeline, path)

        # THEN Lambda's retry of that chunk redoes the merge, and the job completes once
        assert pipeline.runtime is not None
        assert pipeline.runtime.lambda_faults.merge_crashes.fired == 1
        _assert_pages_read_right(pipeline, record, texts)
        assert (record["chunks_done"], record["pages_done"]) == (3, 7)
        assert _work_objects(pipeline, record["job_id"]) == []


def test_a_chunk_that_crashes_on_every_attempt_fails_the_job_naming_its_pages(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN a 9-page PDF whose chunk 1 (pages 4-6) dies mid-chunk on all 3 attempts
    path, _ = _pdf(tmp_path, "nine-pages.pdf", 9)
    faults = Faults(crash_chunk_index=1, chunk_crashes=3)
    with running(tmp_path, models_dir, faults) as pipeline:
        # WHEN it is submitted
        record = _submit(pipeline, path)

        # THEN the on-failure destination ends the job FAILED, naming the pages
        assert record["status"] == JobStatus.FAILED
        assert record["error"]["code"] == "PROCESSOR_CRASHED"
        assert record["failed_pages"] == "pages 4-6"
        assert "pages 4-6" in record["error"]["message"]
        assert 1 not in record.get("chunks_committed", [])
        assert pipeline.runtime is not None
        assert pipeline.runtime.lambda_faults.chunk_crashes.fired == 3


def test_a_user_error_in_one_chunk_fails_the_job_with_its_code(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN a 7-page TIFF whose page 6 declares more pixels than a page may have
    images, _ = _pages(7)
    frames: list[Image.Image] = [image.convert("1") for image in images]
    frames[5] = Image.new("1", (9500, 9500), 1)
    path = tmp_path / "bad-page-six.tiff"
    path.write_bytes(encode_pages(frames, "TIFF", compression="group4"))
    with running(tmp_path, models_dir, Faults()) as pipeline:
        # WHEN it is submitted
        record = _submit(pipeline, path)

        # THEN the chunk holding page 6 fails the job with the page's own error
        assert record["status"] == JobStatus.FAILED
        assert record["error"]["code"] == "IMAGE_TOO_LARGE"
        assert "page 6" in record["error"]["message"]
        assert record["failed_pages"] == "pages 4-6"
        assert record["chunks_total"] == 3
