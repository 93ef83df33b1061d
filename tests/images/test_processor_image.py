"""The OCR processor image, run the way Lambda runs it, processes real documents.

The image's entrypoint and CMD handler start under a Lambda Runtime API (devkit.local.
lambda_container: the FAKE of the Lambda service), with the environment the stack gives the
function, a read-only root file system, a non-root user and Lambda's memory limit. The rest of
the pipeline (S3, SQS, DynamoDB on the embedded emulator; the real invoker) is the local run.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pillow_heif
import pytest
from PIL import Image
from pypdf import PdfReader, PdfWriter

from devkit.local.pipeline import LocalPipeline
from devkit.synthetic import encode, encode_pages, render_page, sample_lines, truncated
from devkit.textmetrics import character_error_rate
from idp.contract.job_record import JobRecord
from idp.contract.names import JobStatus, OcrModel
from idp.document.ocr.paddle.classifiers import OFFLINE_MODEL_NAME
from tests.images.support import image_pipeline, running_containers
from tests.local_runs import finished_job
from tests.paths import SAMPLES

pytestmark = pytest.mark.image

JOB_TIMEOUT_S = 600.0  # a cold container loads its engine from the S3 model cache first


@pytest.fixture(scope="module")
def pipeline(
    processor_image: str, models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LocalPipeline]:
    with image_pipeline(tmp_path_factory, models_dir, processor_image=processor_image) as running:
        yield running


def _run(
    pipeline: LocalPipeline,
    file: Path,
    data: bytes,
    *,
    model: OcrModel = OcrModel.PP_OCRV5,
    lang: str = "en",
) -> tuple[JobRecord, Any]:
    file.write_bytes(data)
    client = pipeline.client()
    return finished_job(client, file, model=model, lang=lang, timeout_s=JOB_TIMEOUT_S), client


def _page_text(result: dict[str, Any], page: int) -> str:
    return "\n".join(line["text"] for line in result["pages"][page - 1]["lines"])


def test_image_ocrs_a_multi_page_pdf(
    pipeline: LocalPipeline, processor_image: str, tmp_path: Path
) -> None:
    # GIVEN a three-page PDF with different text on every page
    pages_lines = [sample_lines(4, offset=offset) for offset in (0, 7, 14)]
    pages = [
        render_page(lines, size=(1700, 80 + 66 * len(lines)), font_size=34, margin=50)
        for lines in pages_lines
    ]
    pdf = encode_pages(pages, "PDF", resolution=144.0)

    # WHEN it goes through the pipeline and the processor image's own handler
    record, client = _run(pipeline, tmp_path / "report.pdf", pdf)

    # THEN the job is COMPLETED with every page's text, by a container of the image
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    result = client.result_document(record["job_id"])
    assert [page["page"] for page in result["pages"]] == [1, 2, 3]
    for number, lines in enumerate(pages_lines, start=1):
        assert character_error_rate("\n".join(lines), _page_text(result, number)) <= 0.02
    assert running_containers(processor_image), (
        "no container of the processor image is running (the warm environment)"
    )


def test_image_fails_a_broken_pdf_with_its_code_and_keeps_serving(
    pipeline: LocalPipeline, tmp_path: Path
) -> None:
    # GIVEN a PDF cut off halfway
    lines = sample_lines(3, offset=21)
    page = render_page(lines, size=(1700, 300), font_size=34, margin=50)
    broken = truncated(encode_pages([page], "PDF", resolution=144.0))

    # WHEN it is processed by the image, followed by a good document
    failed, _ = _run(pipeline, tmp_path / "broken.pdf", broken)
    good, client = _run(
        pipeline, tmp_path / "good.pdf", encode_pages([page], "PDF", resolution=144.0)
    )

    # THEN the broken one ends FAILED with its specific code, and the next one still completes
    assert failed["status"] == JobStatus.FAILED
    assert failed["error"]["code"] == "CORRUPT_DOCUMENT", json.dumps(failed["error"])
    assert good["status"] == JobStatus.COMPLETED, good.get("error")
    text = _page_text(client.result_document(good["job_id"]), 1)
    assert character_error_rate("\n".join(lines), text) <= 0.02


def test_image_reads_a_sideways_page_upright_with_the_model_it_ships(
    pipeline: LocalPipeline, tmp_path: Path
) -> None:
    # GIVEN a page scanned sideways, and a model cache without PaddleOCR's orientation model
    lines = sample_lines(3, offset=11)
    page = render_page(lines, size=(1700, 300), font_size=34, margin=50).rotate(-90, expand=True)

    # WHEN the image processes it
    record, client = _run(pipeline, tmp_path / "sideways.png", encode(page, "PNG"))

    # THEN the offline orientation model inside the image turned it upright to read it
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    result = client.result_document(record["job_id"])
    assert result["pages"][0]["rotation"] == 90
    assert OFFLINE_MODEL_NAME in result["engine"]["models"]
    assert character_error_rate("\n".join(lines), _page_text(result, 1)) <= 0.02


def test_image_reads_french_with_ppocrv6(pipeline: LocalPipeline, tmp_path: Path) -> None:
    # GIVEN a French page, submitted with PP-OCRv6
    sample = SAMPLES / "lang-fr.png"

    # WHEN the image reads it
    record, client = _run(
        pipeline, tmp_path / "fr.png", sample.read_bytes(), model=OcrModel.PP_OCRV6, lang="fr"
    )

    # THEN its accents come back, read by PP-OCRv6 small on ONNX Runtime inside the image
    assert record["status"] == JobStatus.COMPLETED, record
    result = client.result_document(record["job_id"])
    assert result["engine"]["models"][:2] == ["PP-OCRv6_small_det", "PP-OCRv6_small_rec"]
    assert result["engine"]["name"] == "paddleocr/onnxruntime"
    assert "Le garçon a été très déçu à Noël." in result["text"]


def test_image_reads_a_real_table_with_ppstructurev3(
    pipeline: LocalPipeline, tmp_path: Path
) -> None:
    # GIVEN the first page of tabula-py's mtcars PDF, a real table (tests/samples/tables)
    sample = SAMPLES / "tables" / "mtcars.pdf"
    writer = PdfWriter()
    writer.add_page(PdfReader(sample).pages[0])
    first_page = io.BytesIO()
    writer.write(first_page)

    # WHEN the image reads it with PP-StructureV3, every stage on the weights the image's model
    # cache serves (the CDLA layout model standing in for PP-DocLayout)
    record, client = _run(
        pipeline, tmp_path / "mtcars.pdf", first_page.getvalue(), model=OcrModel.PP_STRUCTUREV3
    )

    # THEN the first page has its table, every cell as its PDF holds it, and says which stages
    # ran: the layout model on its pixels, its text and table from its PDF
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    result = client.result_document(record["job_id"])
    page = result["pages"][0]
    (table,) = [block for block in page["blocks"] if block["type"] == "table"]
    cells = {(cell["row"], cell["column"]): cell["text"] for cell in table["cells"]}
    with (SAMPLES / "tables" / "mtcars.csv").open(encoding="utf-8", newline="") as rows:
        truth = [[value.strip() for value in row] for row in csv.reader(rows)]
    assert cells == {
        (r + 1, c + 1): value for r, row in enumerate(truth) for c, value in enumerate(row)
    }
    assert {stage["name"] for stage in page["stages"]} >= {"layout", "text", "table"}
    assert page["text_source"] == "text_layer"
    assert "| Mazda RX4 | 21.0 |" in (result["markdown"] or "")


def test_image_reads_a_phone_photo_in_heic_upright(pipeline: LocalPipeline, tmp_path: Path) -> None:
    # GIVEN a page photographed in HEIC, stored sideways with the turn to undo, as a phone
    # held sideways saves it (pillow-heif's encoder here; the image decodes with pi-heif)
    lines = sample_lines(3, offset=5)
    page = render_page(lines, size=(1700, 300), font_size=34, margin=50)
    exif = Image.Exif()
    exif[0x0112] = 6  # turn 90° clockwise to show
    photo = io.BytesIO()
    pillow_heif.from_pillow(page.rotate(90, expand=True)).save(photo, exif=exif.tobytes())

    # WHEN the image processes it
    record, client = _run(pipeline, tmp_path / "photo.heic", photo.getvalue())

    # THEN it is read upright, as the camera meant, with no turn left to find
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    result = client.result_document(record["job_id"])
    assert result["pages"][0]["rotation"] == 0
    assert character_error_rate("\n".join(lines), _page_text(result, 1)) <= 0.02


def _check_baked_in_image(processor_image: str, models: Path) -> subprocess.CompletedProcess[str]:
    """The image's own build-time check, run in the image on `models` as its /opt/models."""
    return subprocess.run(
        [
            *("docker", "run", "--rm", "--network", "none", "--entrypoint", "python"),
            *("-v", f"{models}:/opt/models:ro", processor_image),
            *("-m", "idp.document.ocr.models.baked", "/opt/models"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_image_refuses_a_baked_model_whose_files_differ_from_its_pin(
    processor_image: str, models_dir: Path, tmp_path: Path
) -> None:
    # GIVEN the offline detection model as an image would bake it, and a copy with one byte
    # of its weights changed
    name = "PP-OCRv6_small_det"
    intact, tampered = tmp_path / "intact", tmp_path / "tampered"
    shutil.copytree(models_dir / name, intact / name)
    shutil.copytree(models_dir / name, tampered / name)
    weights = tampered / name / "inference.onnx"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF
    weights.write_bytes(bytes(data))

    # WHEN the image checks each as its baked models THEN the intact one passes and the other
    # stops it, naming the model
    assert _check_baked_in_image(processor_image, intact).returncode == 0
    refused = _check_baked_in_image(processor_image, tampered)
    assert refused.returncode == 1
    assert f"model {name}: the directory baked at /opt/models/{name} does not match" in (
        refused.stderr
    )
