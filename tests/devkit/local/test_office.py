"""Office documents through the local pipeline: the processor hands each to the converter
function (the same handler as the converter image, with the host's LibreOffice), reads the PDF
it writes, and records the conversion. Real documents from other projects' test suites
(devkit.office_samples) read as their own text; a spreadsheet's cells come as table blocks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from devkit.local.pipeline import LocalPipeline
from devkit.office_samples import own_text, sample_path
from devkit.textmetrics import character_error_rate
from idp.contract.names import JobStatus, MediaType, OcrModel
from tests.local_runs import JOB_TIMEOUT_S, completed_result, running_pipeline

pytestmark = pytest.mark.ocr

DOCUMENTS = {
    "docx-table": MediaType.DOCX,
    "docx-hyperlinks": MediaType.DOCX,
    "pptx-paragraphs": MediaType.PPTX,
    "pptx-table": MediaType.PPTX,
    "odt-poem": MediaType.ODT,
    "odt-styles": MediaType.ODT,
    "xlsx-five-sheets": MediaType.XLSX,
}


@pytest.fixture(scope="module")
def office_pipeline(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Any:
    with running_pipeline(
        tmp_path_factory.mktemp("office"), models_dir, vl_enabled=False, quiet_functions=True
    ) as pipeline:
        yield pipeline


@pytest.fixture(scope="module")
def converted(
    office_pipeline: LocalPipeline, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[Path, dict[str, Any], dict[str, Any]]]:
    """Each sample submitted with PP-OCRv5: its file, its job record and its result."""
    folder = tmp_path_factory.mktemp("samples")
    client = office_pipeline.client()
    paths = {key: sample_path(key, folder) for key in DOCUMENTS}
    jobs = {key: client.submit(path, model=OcrModel.PP_OCRV5) for key, path in paths.items()}
    records = client.wait([job.job_id for job in jobs.values()], timeout_s=JOB_TIMEOUT_S)
    out = {}
    for key, job in jobs.items():
        record = records[job.job_id]
        assert record is not None
        assert record["status"] == JobStatus.COMPLETED, record
        out[key] = (paths[key], dict(record), client.result_document(job.job_id))
    return out


def _read_text(result: dict[str, Any]) -> str:
    return " ".join(result["text"].split())


@pytest.mark.parametrize("key", [k for k in DOCUMENTS if not k.startswith("xlsx")])
def test_an_office_document_reads_as_its_own_text(
    converted: dict[str, tuple[Path, dict[str, Any], dict[str, Any]]], key: str
) -> None:
    # GIVEN a real DOCX, PPTX or ODT converted and read (fixture), and its own text as its
    # format's reader gives it
    path, record, result = converted[key]
    truth = own_text(path)

    # THEN the job read it from the PDF's text layer, in the document's order, within 1 % CER
    assert result["source"]["media_type"] == DOCUMENTS[key].value
    assert record["media_type"] == DOCUMENTS[key].value
    assert all(page["text_source"] == "text_layer" for page in result["pages"])
    cer = character_error_rate(truth, _read_text(result))
    assert cer <= 0.01, (cer, truth, result["text"])


def test_the_conversion_is_recorded_with_its_converter_and_version(
    converted: dict[str, tuple[Path, dict[str, Any], dict[str, Any]]],
) -> None:
    for _path, _record, result in converted.values():
        conversion = result["source"]["conversion"]
        assert conversion["converter"] == "LibreOffice"
        assert conversion["version"].startswith("7.")
        assert conversion["seconds"] > 0
        assert result["timings_ms"]["convert"] > 0


def test_slides_keep_their_count_and_order(
    converted: dict[str, tuple[Path, dict[str, Any], dict[str, Any]]],
) -> None:
    import pptx

    for key in ("pptx-paragraphs", "pptx-table"):
        path, _record, result = converted[key]
        slides = pptx.Presentation(str(path)).slides
        assert result["source"]["page_count"] == len(slides) == len(result["pages"])
        for slide, page in zip(slides, result["pages"], strict=True):
            words = [
                word
                for shape in slide.shapes
                if shape.has_text_frame
                for word in shape.text_frame.text.split()
            ]
            read = " ".join(line["text"] for line in page["lines"])
            assert all(word in read for word in words), (page["page"], words, read)


def test_a_spreadsheet_gives_each_sheet_as_a_table_of_its_cells(
    converted: dict[str, tuple[Path, dict[str, Any], dict[str, Any]]],
) -> None:
    import openpyxl

    # GIVEN a real five-sheet workbook converted and read, and its cells as openpyxl reads them
    path, _record, result = converted["xlsx-five-sheets"]
    workbook = openpyxl.load_workbook(str(path), data_only=True)

    # THEN each sheet is a page in the workbook's order, holding one table block whose cells
    # are the sheet's: every value where openpyxl has it (within 1 % CER over all cells)
    assert len(result["pages"]) == len(workbook.worksheets) == 5
    truth, read = [], []
    for sheet, page in zip(workbook.worksheets, result["pages"], strict=True):
        (table,) = page["blocks"]
        assert table["type"] == "table"
        assert table["label"] == "sheet"
        cells = {(cell["row"], cell["column"]): cell for cell in table["cells"]}
        assert max(row for row, _ in cells) == sheet.max_row
        assert max(column for _, column in cells) == sheet.max_column
        for row in sheet.iter_rows():
            for value in row:
                if value.value is None:
                    continue
                truth.append(str(value.value))
                read.append(cells[(value.row, value.column)]["text"])
        found = [cell for cell in table["cells"] if cell["text"] and cell["box"] is not None]
        assert len(found) >= 0.95 * sum(1 for cell in table["cells"] if cell["text"])
        assert page["markdown"].startswith(f"## {sheet.title}")
    cer = character_error_rate(" ".join(truth), " ".join(read))
    assert cer <= 0.01, cer


def test_a_spreadsheets_tables_reach_result_md_and_textract_json(
    office_pipeline: LocalPipeline,
    converted: dict[str, tuple[Path, dict[str, Any], dict[str, Any]]],
    tmp_path: Path,
) -> None:
    from textractor.parsers import response_parser

    _path, record, result = converted["xlsx-five-sheets"]
    client = office_pipeline.client()
    folder = client.download_result(result["job_id"], tmp_path).parent
    markdown = (folder / "result.md").read_text(encoding="utf-8")
    assert markdown.count("## Sheet") == 5
    assert (folder / "result.pdf").read_bytes().startswith(b"%PDF-")
    textract = client.result_document(result["job_id"], uri_field="textract_uri")
    document = response_parser.parse(textract)
    assert len(document.tables) == 5
    first = result["pages"][0]["blocks"][0]
    rows = max(cell["row"] for cell in first["cells"])
    columns = max(cell["column"] for cell in first["cells"])
    assert document.tables[0].to_pandas().shape == (rows, columns)
    assert record["page_count"] == 5


def test_an_iphone_heic_photo_completes_upright_through_the_same_pipeline(
    office_pipeline: LocalPipeline, tmp_path: Path
) -> None:
    from devkit.phone_photos import photo_bytes

    # GIVEN an iPhone 8 Plus photo (HEIC, stored sideways with the turn to undo; pillow-heif's
    # test file): an arrow drawn on lined paper, no text
    photo = tmp_path / "IMG_0001.HEIC"
    photo.write_bytes(photo_bytes("iphone-arrow"))

    # WHEN it is submitted like any document
    result = completed_result(
        office_pipeline.client(), photo, model=OcrModel.PP_OCRV5, timeout_s=JOB_TIMEOUT_S
    )

    # THEN it completed as one portrait page, read as the camera meant (nothing left to turn)
    assert result["source"]["media_type"] == MediaType.HEIF.value
    (page,) = result["pages"]
    assert (page["width"], page["height"], page["rotation"]) == (3024, 4032, 0)
