"""The processor's side of an Office document's conversion: it hands the converter presigned
URLs of exactly its job's input and converted objects, and reads only those, whatever the
converter answers."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from devkit.office_samples import sample_bytes
from idp.contract import names
from idp.contract.conversion import (
    CONVERTED_PDF,
    CONVERTED_SHEETS,
    ConversionInfo,
    ConversionRequest,
    ConversionResponse,
    converted_key,
)
from idp.contract.jobs import DispatchedJob
from idp.contract.names import JobStatus
from idp.contract.results import result_key, results_prefix
from idp.flow.office_conversion import URL_LIFETIME_SECONDS
from ocr_processor_image.job import process_job
from ocr_processor_image.outcome import InvocationOutcome
from ocr_processor_image.warm_state import WarmState
from tests.processor_account import PRODUCER, RESULTS_BUCKET, Aws, WarmEngines


class SubvertedConverter:
    """A STAND-IN for a converter that a document took over: it answers a conversion, with
    sheets, but wrote nothing (its URLs reach only this job's keys; its role reaches none)."""

    def __init__(self) -> None:
        self.requests: list[ConversionRequest] = []

    def convert(self, request: ConversionRequest) -> ConversionResponse:
        self.requests.append(request)
        return ConversionResponse(
            media_type="application/pdf",
            sheets=True,
            conversion=ConversionInfo(converter="LibreOffice", version="7.4.7.2", seconds=1.0),
        )


def _run_docx_job(
    aws: Aws, warm_engines: WarmEngines
) -> tuple[DispatchedJob, SubvertedConverter, InvocationOutcome]:
    """A DOCX job run by the processor with the subverted converter."""
    job = aws.create_job("input/PP-OCRv5/letter.docx", sample_bytes("docx-table"))
    converter = SubvertedConverter()
    warm = WarmState(
        settings=aws.settings,
        s3=aws.s3,
        store=aws.store,
        engines=warm_engines.registry,
        converter=converter,
    )
    return job, converter, process_job(job, warm)


def test_the_processor_reads_only_its_own_jobs_conversion(
    aws: Aws, warm_engines: WarmEngines
) -> None:
    # GIVEN another job's result in the results bucket, and a DOCX job whose converter answers
    # a conversion it never wrote; WHEN the processor runs the job
    aws.s3.put_object(
        Bucket=RESULTS_BUCKET,
        Key=result_key("another-job", names.RESULT_PDF, owner=PRODUCER),
        Body=b"%PDF-",
    )
    job, converter, outcome = _run_docx_job(aws, warm_engines)

    # THEN the job ends CONVERSION_FAILED and no result was written from the other job's file
    (request,) = converter.requests
    assert request.job_id == job.job_id
    assert outcome.status == "FAILED"
    record = aws.record(job.job_id)
    assert record["status"] == JobStatus.FAILED
    assert record["error"]["code"] == "CONVERSION_FAILED"
    assert aws.keys(RESULTS_BUCKET, results_prefix(job.job_id, owner=job.owner)) == []


def _signed(url: str) -> tuple[str, dict[str, list[str]]]:
    """Host and path (virtual-hosted or path style), and the query."""
    parts = urlsplit(url)
    return parts.netloc + parts.path, parse_qs(parts.query)


def test_the_converters_urls_name_only_the_jobs_input_and_conversion(
    aws: Aws, warm_engines: WarmEngines
) -> None:
    # GIVEN a DOCX job whose converter records its request
    # WHEN the processor runs it
    job, converter, _ = _run_docx_job(aws, warm_engines)

    # THEN the request holds SigV4 URLs, short-lived, of the input and the two converted keys
    (request,) = converter.requests
    urls = {"input": request.input_url, "pdf": request.pdf_url, "sheets": request.sheets_url}
    expected = {
        "input": (job.bucket, job.key),
        "pdf": (RESULTS_BUCKET, converted_key(job.job_id, CONVERTED_PDF)),
        "sheets": (RESULTS_BUCKET, converted_key(job.job_id, CONVERTED_SHEETS)),
    }
    for name, url in urls.items():
        where, query = _signed(url)
        bucket, key = expected[name]
        assert bucket in where, (name, where)
        assert where.endswith(f"/{key}"), (name, where)
        assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"], name
        assert query["X-Amz-Expires"] == [str(URL_LIFETIME_SECONDS)], name
    assert "content-type" in _signed(request.pdf_url)[1]["X-Amz-SignedHeaders"][0]
    assert request.input_url not in repr(request)
