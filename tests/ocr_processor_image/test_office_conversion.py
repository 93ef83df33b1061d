"""The processor's side of an Office document's conversion: it reads only its own job's
conversion, whatever the converter answers."""

from __future__ import annotations

from devkit.office_samples import sample_bytes
from idp.contract.conversion import ConversionInfo, ConversionRequest, ConversionResponse
from idp.contract.names import JobStatus
from ocr_processor_image.job import process_job
from ocr_processor_image.warm_state import WarmState
from tests.processor_account import RESULTS_BUCKET, Aws, WarmEngines


class SubvertedConverter:
    """A STAND-IN for a converter that a document took over: it answers with another job's
    result file in place of its own PDF (the real converter's role cannot even read it)."""

    def __init__(self) -> None:
        self.requests: list[ConversionRequest] = []

    def convert(self, request: ConversionRequest) -> ConversionResponse:
        self.requests.append(request)
        return ConversionResponse(
            media_type="application/pdf",
            pdf_key="results/another-job/result.pdf",
            conversion=ConversionInfo(converter="LibreOffice", version="7.4.7.2", seconds=1.0),
        )


def test_the_processor_reads_only_its_own_jobs_conversion(
    aws: Aws, warm_engines: WarmEngines
) -> None:
    # GIVEN another job's result in the results bucket, and a DOCX job whose converter answers
    # with that result's key
    aws.s3.put_object(Bucket=RESULTS_BUCKET, Key="results/another-job/result.pdf", Body=b"%PDF-")
    job = aws.create_job("input/PP-OCRv5/letter.docx", sample_bytes("docx-table"))
    converter = SubvertedConverter()
    warm = WarmState(
        settings=aws.settings,
        s3=aws.s3,
        store=aws.store,
        engines=warm_engines.registry,
        converter=converter,
    )

    # WHEN the processor runs the job
    outcome = process_job(job, warm)

    # THEN the job ends CONVERSION_FAILED and no result was written from the other job's file
    assert converter.requests == [
        ConversionRequest(job_id=job.job_id, bucket=job.bucket, key=job.key)
    ]
    assert outcome.status == "FAILED"
    record = aws.record(job.job_id)
    assert record["status"] == JobStatus.FAILED
    assert record["error"]["code"] == "CONVERSION_FAILED"
    assert aws.keys(RESULTS_BUCKET, f"results/{job.job_id}/") == []
