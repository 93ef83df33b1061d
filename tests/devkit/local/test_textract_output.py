"""result.textract.json read by a consumer nobody here wrote: amazon-textract-textractor loads
the file a job wrote and gets the job's text, lines and words, in reading order."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from textractor.entities.document import Document

from devkit.synthetic_pdf import PageSpec, born_digital_pdf, page_lines
from idp.contract.jobs import JobOptions
from idp.contract.names import JobStatus, OcrModel
from idp.contract.results import PageResult
from idp.flow.textract_json import TextractWriter
from tests.docs_samples import integrate_sample
from tests.local_runs import JOB_TIMEOUT_S, running_pipeline
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.ocr

REPO = REPO_ROOT
DEMO_LETTER = REPO / "samples" / "sample-letter.pdf"


def _lines(result: dict[str, Any], page: int) -> list[str]:
    return [line["text"] for line in result["pages"][page - 1]["lines"]]


def _assert_textractor_reads_the_result(textract: dict[str, Any], result: dict[str, Any]) -> None:
    document = Document.open(textract)
    assert len(document.pages) == len(result["pages"]) == textract["DocumentMetadata"]["Pages"]
    for number, page in enumerate(document.pages, start=1):
        text, words = page.get_text_and_words()
        expected = _lines(result, number)
        assert expected, f"page {number} read no lines"
        # Lines in the result's reading order, and every word of them, in order.
        assert [line for line in text.split("\n") if line] == expected
        assert [word.text for word in words] == [t for line in expected for t in line.split()]
        for line in page.lines:
            box = line.bbox
            for word in line.words:  # each word inside its line (Textract's shares of the page)
                assert box.x - 1e-6 <= word.bbox.x <= word.bbox.x + word.bbox.width
                assert word.bbox.x + word.bbox.width <= box.x + box.width + 1e-6
                assert 0.0 < word.confidence <= 1.0  # textractor's scale: Textract's 0-100 / 100
    blocks = textract["Blocks"]
    assert {block["BlockType"] for block in blocks} == {"PAGE", "LINE", "WORD"}
    assert all(0 < block["Confidence"] <= 100 for block in blocks if "Confidence" in block)
    assert len({block["Id"] for block in blocks}) == len(blocks)


def test_result_textract_json_reads_in_textractor_as_the_job_read_it(
    tmp_path: Path, models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the demo letter (OCR'd: word boxes from the recognizer), a 5-page born-digital PDF
    # read from its text layer in 2-page chunks (word boxes from the glyphs, merged), and a job
    # that turns the file off
    long_pdf = tmp_path / "report.pdf"
    long_pdf.write_bytes(
        born_digital_pdf([PageSpec(lines=page_lines(number, 8)) for number in range(1, 6)])
    )
    with running_pipeline(
        tmp_path / "work",
        models_dir,
        vl_enabled=False,
        chunk_pages=2,
        processor_concurrency=2,
        quiet_functions=True,
    ) as pipeline:
        client = pipeline.client()
        scanned = client.submit(
            DEMO_LETTER, model=OcrModel.PP_OCRV5, options=JobOptions(text_layer="ocr")
        )
        chunked = client.submit(long_pdf, model=OcrModel.PP_OCRV5)
        off = client.submit(
            DEMO_LETTER,
            model=OcrModel.PP_OCRV5,
            options=JobOptions(text_layer="ocr", textract_json=False, searchable_pdf=False),
        )

        # WHEN they end and their files are read back
        ids = [scanned.job_id, chunked.job_id, off.job_id]
        records = client.wait(ids, timeout_s=JOB_TIMEOUT_S)
        results = {job_id: client.result_document(job_id) for job_id in ids}
        textract = {
            job_id: client.result_document(job_id, uri_field="textract_uri")
            for job_id in (scanned.job_id, chunked.job_id)
        }
        downloaded = client.download_result(chunked.job_id, tmp_path / "out")

    # THEN textractor reads each job's text, lines and words as result.json has them
    for job_id in ids:
        record = records[job_id]
        assert record is not None
        assert record["status"] == JobStatus.COMPLETED, record
    assert records[chunked.job_id]["fan_out_timings_ms"]  # type: ignore[index]
    assert results[scanned.job_id]["pages"][0]["text_source"] == "ocr"
    assert results[chunked.job_id]["pages"][0]["text_source"] == "text_layer"
    for job_id in (scanned.job_id, chunked.job_id):
        _assert_textractor_reads_the_result(textract[job_id], results[job_id])
        assert records[job_id]["textract_uri"].endswith("/result.textract.json")  # type: ignore[index]
    assert "Total amount payable:" in json.dumps(textract[scanned.job_id])
    # The words were measured, not spread over the line: OCR'd and text-layer lines alike.
    for job_id in (scanned.job_id, chunked.job_id):
        lines = [line for page in results[job_id]["pages"] for line in page["lines"]]
        assert all(line["words"] for line in lines)
    # The merge streamed the same file the whole-result writer gives for the same pages.
    pages = [PageResult.model_validate(page) for page in results[chunked.job_id]["pages"]]
    out = io.BytesIO()
    writer = TextractWriter(out, job_id=chunked.job_id)
    for page in pages:
        writer.add(page)
    writer.close(model_version=OcrModel.PP_OCRV5.value)
    assert json.loads(out.getvalue()) == textract[chunked.job_id]
    assert (downloaded.parent / "result.textract.json").is_file()
    # The Integrate page's sample, run as written on the letter's file, reads its first page.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "result.textract.json").write_text(json.dumps(textract[scanned.job_id]))
    scope: dict[str, Any] = {}
    exec(integrate_sample("python", "get_text_and_words"), scope)
    assert [line for line in scope["text"].split("\n") if line] == _lines(
        results[scanned.job_id], 1
    )
    assert len(scope["words"]) == sum(
        len(line.split()) for line in _lines(results[scanned.job_id], 1)
    )
    # The option turns it off.
    assert "textract_uri" not in records[off.job_id]  # type: ignore[operator]
