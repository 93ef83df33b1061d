"""PaddleOCR-VL jobs at the processor: counted, then submitted to the endpoint whole or in chunks.

The endpoint is moto's sagemaker-runtime (`InvokeEndpointAsync` accepted, nothing run): what is
checked here is what the processor hands SageMaker, the manifests and chunk PDFs in S3, and the
job record. The endpoint serving those chunks is tests/devkit/local's (the real container).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from devkit.synthetic import long_pdf
from idp.contract import names
from idp.contract.jobs import DispatchedJob
from idp.contract.names import JobStatus, OcrModel
from idp.document.ocr.registry import EngineRegistry
from idp.flow.chunks.plan import part_pdf_key
from ocr_processor_image.job import process_job
from ocr_processor_image.outcome import InvocationOutcome, InvocationStatus
from tests.processor_account import RESULTS_BUCKET, Aws

ENDPOINT = "idp-test-vl"


Plan = Callable[[DispatchedJob, str], InvocationOutcome]


@pytest.fixture
def plan(aws: Aws, empty_cache_registry: EngineRegistry) -> Plan:
    """The processor with a VL endpoint and no engine weights: `plan(job, invocation_id)`."""
    warm = aws.with_vl_endpoint(empty_cache_registry, max_pages=names.DEFAULT_MAX_PAGES)
    return lambda job, invocation: process_job(job, warm, invocation_id=invocation)


def vl_pdf_job(aws: Aws, pages: int) -> DispatchedJob:
    """A PaddleOCR-VL job for an uploaded PDF of `pages` pages."""
    data, _ = long_pdf(pages)
    key = f"input/PaddleOCR-VL/{pages}-pages.pdf"
    return aws.create_job(key, data, model=OcrModel.PADDLEOCR_VL)


def manifest(aws: Aws, key: str) -> DispatchedJob:
    return DispatchedJob.model_validate_json(aws.object_bytes(RESULTS_BUCKET, key))


def test_a_short_document_is_submitted_whole_once(aws: Aws, plan: Plan) -> None:
    # GIVEN a 3-page PDF for PaddleOCR-VL (the chunk size is 10)
    job = vl_pdf_job(aws, 3)

    # WHEN the processor gets it, and then a duplicate delivery of the same event
    first = plan(job, "invocation-1")
    duplicate = plan(job, "invocation-2")

    # THEN one manifest (the job itself) went to the endpoint under the job's id; no engine
    # was loaded, the job waits QUEUED for the endpoint's result, and the duplicate did nothing
    assert (first.status, duplicate.status) == ("SUBMITTED", "SKIPPED")
    key = f"{names.VL_MANIFEST_PREFIX}{job.job_id}.json"
    assert aws.keys(RESULTS_BUCKET, names.VL_MANIFEST_PREFIX) == [key]
    assert manifest(aws, key) == job
    record = aws.record(job.job_id)
    assert record["status"] == JobStatus.QUEUED
    assert record["inference_id"] == job.job_id
    assert record["manifest_uri"] == f"s3://{RESULTS_BUCKET}/{key}"
    assert record["pages_total"] == 3


def test_a_long_document_is_submitted_as_one_inference_per_chunk(aws: Aws, plan: Plan) -> None:
    # GIVEN a 23-page PDF for PaddleOCR-VL (chunks of 10 pages)
    job = vl_pdf_job(aws, 23)

    # WHEN the processor gets it
    outcome = plan(job, "invocation-1")

    # THEN each chunk's pages were copied into a PDF of their own, and each chunk is a manifest
    # of its own naming that PDF and its page range, so each inference reads only its pages
    assert outcome.status == "FANNED_OUT"
    manifests = aws.keys(RESULTS_BUCKET, f"{names.VL_MANIFEST_PREFIX}{job.job_id}/")
    chunks = [manifest(aws, key).chunk for key in manifests]
    assert [(c.first_page, c.last_page) for c in chunks if c] == [(1, 10), (11, 20), (21, 23)]
    for index, chunk in enumerate(chunks):
        assert chunk is not None
        assert (chunk.part_bucket, chunk.part_key) == (
            RESULTS_BUCKET,
            part_pdf_key(job.job_id, index),
        )
        assert aws.object_bytes(RESULTS_BUCKET, part_pdf_key(job.job_id, index)).startswith(b"%PDF")
    record = aws.record(job.job_id)
    assert (record["status"], record["chunks_total"], record["pages_total"]) == (
        JobStatus.QUEUED,
        3,
        23,
    )


@pytest.mark.parametrize(
    ("data", "code"),
    [(b"%PDF-1.7 not really a pdf", "CORRUPT_DOCUMENT"), (b"GIF89a....", "UNSUPPORTED_MEDIA_TYPE")],
)
def test_a_document_the_endpoint_could_not_read_fails_before_any_gpu_time(
    aws: Aws, plan: Plan, data: bytes, code: str
) -> None:
    # GIVEN an unreadable upload for PaddleOCR-VL
    job = aws.create_job("input/PaddleOCR-VL/bad.pdf", data, model=OcrModel.PADDLEOCR_VL)

    # WHEN the processor gets it
    outcome = plan(job, "invocation-1")

    # THEN it fails with the document's error, and nothing was submitted
    assert outcome.status == InvocationStatus.FAILED
    assert aws.record(job.job_id)["error"]["code"] == code
    assert aws.keys(RESULTS_BUCKET, names.VL_MANIFEST_PREFIX) == []
