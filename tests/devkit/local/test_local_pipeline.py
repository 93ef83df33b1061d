"""The whole pipeline on the embedded AWS: same handlers, real OCR, driven as a user would."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any, Final

import pytest
from PIL import Image, ImageDraw

from devkit.client import PipelineClient
from devkit.hostile import CORPUS as HOSTILE
from devkit.local.pipeline import LocalPipeline
from devkit.synthetic import encode, encode_pages, pdf_pages, render_page, sample_lines
from devkit.textmetrics import character_error_rate
from idp.contract import names
from idp.contract.job_record import JobRecord
from idp.contract.names import JobStatus, OcrModel
from tests.local_runs import JOB_TIMEOUT_S, idp_cli, page_text, wait_for, write_long_pdf
from tests.pdftext import pdf_text, read_pages
from tests.placement import overlay_marks, page_as_rendered

pytestmark = pytest.mark.ocr


def _page(lines: list[str]) -> Any:
    """A small page of known text (small pages keep the engine fast on a 2-core machine)."""
    return render_page(lines, size=(1700, 80 + 66 * len(lines)), font_size=34, margin=50)


def _endpoint_capacity(pipeline: LocalPipeline) -> int:
    assert pipeline.resources is not None
    described = pipeline.endpoint.client("sagemaker").describe_endpoint(
        EndpointName=pipeline.resources.vl_endpoint
    )
    return int(described["ProductionVariants"][0]["DesiredInstanceCount"])


def test_local_run_cli_recognizes_a_png_and_a_pdf(tmp_path: Path, models_dir: Path) -> None:
    # GIVEN a one-page PNG and a two-page PDF of known text
    png_lines, pdf_lines = sample_lines(4), [sample_lines(3, offset=5), sample_lines(3, offset=9)]
    png = tmp_path / "letter.png"
    png.write_bytes(encode(_page(png_lines), "PNG"))
    pdf = tmp_path / "report.pdf"
    pages = [_page(lines) for lines in pdf_lines]
    pdf.write_bytes(encode_pages(pages, "PDF", resolution=144.0))

    # WHEN `idp local run --json` runs them through the whole local pipeline
    events = tmp_path / "events.jsonl"
    done = idp_cli(
        "local",
        "run",
        str(png),
        str(pdf),
        "--model",
        "PP-OCRv5",
        "--out",
        str(tmp_path / "out"),
        "--json",
        "--events",
        str(events),
    )

    # THEN it exits 0, stdout is exactly one JSON array, and the text is right
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout)
    assert [row["file"] for row in rows] == [str(png), str(pdf)]
    assert all(row["status"] == "COMPLETED" and row["error"] is None for row in rows)
    assert [row["pages"] for row in rows] == [1, 2]
    png_result = json.loads(Path(rows[0]["result"]).read_text())
    pdf_result = json.loads(Path(rows[1]["result"]).read_text())
    assert character_error_rate("\n".join(png_lines), page_text(png_result, 1)) <= 0.02
    for number, lines in enumerate(pdf_lines, start=1):
        assert character_error_rate("\n".join(lines), page_text(pdf_result, number)) <= 0.02
    # AND each result folder holds the searchable PDF, whose text pdftotext reads back
    for row, result in ((rows[0], png_result), (rows[1], pdf_result)):
        searchable = Path(row["result"]).with_name(names.RESULT_PDF)
        assert pdf_text(searchable).split() == result["text"].split()
    # AND --events wrote the one job-finished event of each job, as a subscriber receives it
    received = [json.loads(line) for line in events.read_text().splitlines()]
    assert sorted(e["detail"]["job_id"] for e in received) == sorted(r["job_id"] for r in rows)
    assert {(e["detail"]["status"], e["detail"]["pages"]) for e in received} == {
        ("COMPLETED", 1),
        ("COMPLETED", 2),
    }


def test_local_run_cli_fans_a_long_pdf_out_and_merges_it_in_order(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN a 23-page PDF with its number on every page
    pdf = tmp_path / "long.pdf"
    texts = write_long_pdf(pdf, 23)

    # WHEN `idp local run` OCRs it in chunks of 5 pages on 2 workers
    done = idp_cli(
        "local", "run", str(pdf), "--chunk-pages", "5", "--workers", "2",
        "--out", str(tmp_path / "out"), "--json", "--overlay-page", "0",
    )  # fmt: skip

    # THEN one result holds all 23 pages in order, each with its own text
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = json.loads(done.stdout)
    assert (row["status"], row["pages"]) == ("COMPLETED", 23)
    result = json.loads(Path(row["result"]).read_text())
    assert [page["page"] for page in result["pages"]] == list(range(1, 24))
    for number, text in enumerate(texts, start=1):
        assert character_error_rate(text, page_text(result, number)) <= 0.05, number
    assert result["timings_ms"]["chunks"] == 5
    # AND result.pdf, joined from the chunks' parts, beside it: 23 pages carrying that text
    searchable = Path(row["result"]).with_name(names.RESULT_PDF)
    assert len(read_pages(searchable)) == 23
    for number in (1, 6, 23):
        assert pdf_text(searchable, number).split() == page_text(result, number).split()


def test_local_run_cli_exits_nonzero_when_a_job_fails(tmp_path: Path) -> None:
    # GIVEN a text file dressed up as a PNG
    fake = tmp_path / "notes.png"
    fake.write_text("this is not an image\n")

    # WHEN it is run locally
    done = idp_cli("local", "run", str(fake), "--model", "PP-OCRv5", "--json")

    # THEN it is turned away before anything starts, with its specific code, and the command
    # exits 2 (usage: nothing could run)
    assert done.returncode == 2
    (row,) = json.loads(done.stdout)
    assert row["status"] == "REJECTED"
    assert row["job_id"] is None
    assert row["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"
    assert row["result"] is None
    assert "starting" not in done.stderr


# Hostile inputs of every kind of ending: read, failed with a code, turned away before the run,
# and completed with a page too thin to draw (the 0.5-point PDF page renders 1 × 1 px).
HOSTILE_RUN: Final = (
    "png-800x8-text",
    "png-1x1",
    "pdf-near-zero-box",
    "pdf-thin-box",
    "pdf-rotate-45",
    "jpeg-exif-orientation-9",
)


def test_local_run_over_hostile_inputs_gives_every_file_its_row(tmp_path: Path) -> None:
    # GIVEN hostile documents and a text file among them
    files = []
    for name in HOSTILE_RUN:
        files.append(tmp_path / f"{name}.{name.split('-')[0]}")
        files[-1].write_bytes(HOSTILE[name]())
    notes = tmp_path / "notes.png"
    notes.write_text("not an image\n")
    files.insert(2, notes)

    # WHEN they are run locally in one go
    done = idp_cli("local", "run", *map(str, files), "--model", "PP-OCRv5", "--json")

    # THEN every file has its row, in the order given, each ended with its code
    rows = json.loads(done.stdout)
    assert [row["file"] for row in rows] == [str(file) for file in files]
    by_name = {Path(row["file"]).stem: row for row in rows}
    assert by_name["notes"]["status"] == "REJECTED"
    assert by_name["notes"]["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"
    assert by_name["png-1x1"]["status"] == "FAILED"
    assert by_name["png-1x1"]["error"]["code"] == "IMAGE_SHAPE_UNSUPPORTED"
    assert by_name["png-800x8-text"]["status"] == "COMPLETED"
    # AND a page that cannot be drawn costs its overlay, not its result
    thin = by_name["pdf-near-zero-box"]
    assert thin["status"] == "COMPLETED"
    assert Path(thin["result"]).is_file()
    assert "UnsupportedShape" in thin["overlay_error"]
    # AND the run exits 5: not every job completed
    assert done.returncode == 5, done.stderr[-2000:]


def test_s3_upload_under_input_prefix_is_picked_up(pipeline: LocalPipeline) -> None:
    # GIVEN a page uploaded straight into the input bucket, as `aws s3 cp` would
    assert pipeline.resources is not None
    lines = sample_lines(3, offset=14)
    key = "input/PP-OCRv5/scans/päge one.png"
    pipeline.endpoint.client("s3").put_object(
        Bucket=pipeline.resources.input_bucket,
        Key=key,
        Body=encode(_page(lines), "PNG"),
    )
    client = pipeline.client()

    # WHEN the S3 notification travels through SQS to the invoker and the processor
    def job_for_key() -> JobRecord | None:
        return next((job for job in client.jobs() if job.get("input_key") == key), None)

    wait_for(lambda: job_for_key() is not None, timeout_s=60, what="a job for the uploaded object")
    job = job_for_key()
    assert job is not None
    records = client.wait([job["job_id"]], timeout_s=JOB_TIMEOUT_S)

    # THEN the job completes with the uploaded page's text
    record = records[job["job_id"]]
    assert record is not None
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    result = client.result_document(job["job_id"])
    assert character_error_rate("\n".join(lines), page_text(result, 1)) <= 0.02


def test_vl_job_scales_the_endpoint_out_completes_and_scales_back_in(
    pipeline: LocalPipeline, tmp_path: Path
) -> None:
    # GIVEN the VL endpoint at 0 instances and a page for PaddleOCR-VL (substitute engine)
    runtime = pipeline.runtime
    assert runtime is not None
    assert _endpoint_capacity(pipeline) == 0
    lines = sample_lines(3, offset=20)
    page = tmp_path / "vl.png"
    page.write_bytes(encode(_page(lines), "PNG"))
    client: PipelineClient = pipeline.client()

    # WHEN the job is submitted
    submitted = client.submit(page, model=OcrModel.PADDLEOCR_VL)
    record = client.wait([submitted.job_id], timeout_s=JOB_TIMEOUT_S)[submitted.job_id]

    # THEN the invoker scaled the endpoint 0 → 1, the container ran it, SNS success completed it
    assert record is not None
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    assert record["backend"] == "sagemaker"
    assert runtime.vl.starts >= 1
    result = client.result_document(submitted.job_id)
    assert result["engine"]["substitute"] is True
    assert character_error_rate("\n".join(lines), page_text(result, 1)) <= 0.02

    # AND the idle alarm returns the endpoint to 0 and the container stops
    wait_for(lambda: _endpoint_capacity(pipeline) == 0, timeout_s=120, what="scale-in to 0")
    wait_for(lambda: not runtime.vl.running, timeout_s=30, what="the container to stop")
    assert "ALARM" in runtime.stats.alarm_states


def test_idp_status_and_jobs_show_what_dynamodb_holds(
    pipeline: LocalPipeline, tmp_path: Path
) -> None:
    # GIVEN a finished job in the local pipeline (and whatever earlier tests left there)
    client = pipeline.client()
    page = tmp_path / "status.png"
    page.write_bytes(encode(_page(sample_lines(1, offset=30)), "PNG"))
    submitted = client.submit(page, model=OcrModel.PP_OCRV5)
    client.wait([submitted.job_id], timeout_s=JOB_TIMEOUT_S)
    stored = client.jobs()
    url = pipeline.endpoint.url
    assert url is not None
    env = {**pipeline.endpoint.process_env(), "PATH": "/usr/bin:/bin"}

    # WHEN the CLI is asked against the emulator
    listed = idp_cli("jobs", "--endpoint-url", url, "--json", env=env)
    one = idp_cli("status", stored[0]["job_id"], "--endpoint-url", url, "--json", env=env)

    # THEN both show the records DynamoDB holds
    assert listed.returncode == 0, listed.stderr
    assert {job["job_id"]: job["status"] for job in json.loads(listed.stdout)} == {
        job["job_id"]: job["status"] for job in stored
    }
    assert one.returncode == 0, one.stderr
    assert json.loads(one.stdout) == client.job(stored[0]["job_id"])
    assert names.JOB_ID_ATTR in json.loads(one.stdout)


def _strokes(size: tuple[int, int] = (1200, 900)) -> Image.Image:
    """A page of thick pen strokes: plenty of ink, no text."""
    page = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(page)
    rng = random.Random(3)
    for _ in range(40):
        x, y = rng.randrange(size[0] - 100), rng.randrange(size[1] - 100)
        end = (x + rng.randrange(-200, 200), y + rng.randrange(-200, 200))
        draw.line([(x, y), end], fill="black", width=6)
    return page


def test_a_page_with_ink_but_no_text_is_flagged_for_review_on_the_job_and_in_the_cli(
    pipeline: LocalPipeline, tmp_path: Path
) -> None:
    # GIVEN a PDF whose first page is text and whose second is a drawing with no text
    client = pipeline.client()
    pdf = tmp_path / "drawing.pdf"
    pdf.write_bytes(pdf_pages([_page(sample_lines(2, offset=40)), _strokes()]))
    url = pipeline.endpoint.url
    assert url is not None
    env = {**pipeline.endpoint.process_env(), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}

    # WHEN it is processed
    submitted = client.submit(pdf, model=OcrModel.PP_OCRV5)
    record = client.wait([submitted.job_id], timeout_s=JOB_TIMEOUT_S)[submitted.job_id]

    # THEN the job completes, but names page 2 for review in DynamoDB and in result.json
    assert record is not None
    assert record["status"] == JobStatus.COMPLETED
    assert record["review_pages"] == [2]
    result = client.result_document(submitted.job_id)
    assert result["review_pages"] == [2]
    first, second = result["pages"]
    assert first["quality"]["verdict"] == "ok"
    assert second["quality"]["verdict"] == "review"
    assert second["quality"]["reasons"]
    assert first["render"]["scale"] > 0
    # AND `idp jobs` and `idp status` show it
    listed = idp_cli("jobs", "--endpoint-url", url, env=env)
    shown = idp_cli("status", submitted.job_id, "--endpoint-url", url, env=env)
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if submitted.job_id[:12] in line)
    assert "p. 2" in row
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"review\s.*p\. 2", shown.stdout)


def test_idp_submit_result_and_overlay_against_the_emulator(
    pipeline: LocalPipeline, tmp_path: Path
) -> None:
    # GIVEN a page and the CLI pointed at the running emulator
    url = pipeline.endpoint.url
    assert url is not None
    env = {**pipeline.endpoint.process_env(), "PATH": "/usr/bin:/bin"}
    lines = sample_lines(2, offset=26)
    page = tmp_path / "cli.png"
    page.write_bytes(encode(_page(lines), "PNG"))

    # WHEN it is submitted, then its result and an overlay are asked for
    submitted = idp_cli(
        "submit", str(page), "--model", "ocr", "--endpoint-url", url, "--json", env=env
    )
    assert submitted.returncode == 0, submitted.stderr
    job_id = json.loads(submitted.stdout)["job_id"]
    record = pipeline.client().wait([job_id], timeout_s=JOB_TIMEOUT_S)[job_id]
    result = idp_cli("result", job_id, "--endpoint-url", url, "--json", env=env)
    overlay_png = tmp_path / "overlay.png"
    overlay = idp_cli(
        "overlay", job_id, "--page", "1", "--out", str(overlay_png), "--endpoint-url", url, env=env
    )

    # THEN the job completed (model given by alias), the result has the text, the PNG is the page
    assert record is not None
    assert record["status"] == JobStatus.COMPLETED
    assert record["model"] == OcrModel.PP_OCRV5
    assert result.returncode == 0, result.stderr
    assert character_error_rate("\n".join(lines), json.loads(result.stdout)["text"]) <= 0.02
    assert overlay.returncode == 0, overlay.stderr
    with Image.open(overlay_png) as image:
        assert image.size == _page(lines).size


def test_a_pdf_scanned_sideways_and_upside_down_reads_upright_and_its_overlay_lines_up(
    pipeline: LocalPipeline, tmp_path: Path
) -> None:
    # GIVEN a scanned PDF whose page 1 lies sideways (turned clockwise) and page 2 upside down
    pages_lines = [sample_lines(3, offset=4), sample_lines(3, offset=9)]
    turned = [_page(pages_lines[0]).rotate(-90, expand=True), _page(pages_lines[1]).rotate(180)]
    document = encode_pages(turned, "PDF", resolution=144.0)
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(document)
    url = pipeline.endpoint.url
    assert url is not None
    env = {**pipeline.endpoint.process_env(), "PATH": "/usr/bin:/bin"}

    # WHEN it goes through the pipeline, and `idp overlay` draws page 1
    client = pipeline.client()
    job_id = client.submit(scan, model=OcrModel.PP_OCRV5).job_id
    record = client.wait([job_id], timeout_s=JOB_TIMEOUT_S)[job_id]
    overlay_png = tmp_path / "overlay.png"
    overlay = idp_cli(
        "overlay", job_id, "--page", "1", "--out", str(overlay_png), "--endpoint-url", url, env=env
    )

    # THEN both pages read right, each with the turn that was applied to read it
    assert record is not None
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    result = client.result_document(job_id)
    assert [page["rotation"] for page in result["pages"]] == [90, 180]
    for number, lines in enumerate(pages_lines, start=1):
        assert character_error_rate("\n".join(lines), page_text(result, number)) <= 0.02
    # AND the overlay is page 1 as uploaded, its boxes drawn over the page's text
    assert overlay.returncode == 0, overlay.stderr
    original = page_as_rendered(document, 1)
    with Image.open(overlay_png) as image:
        assert image.size == original.size == (result["pages"][0]["width"], 1700)
        ink_marked, page_painted = overlay_marks(original, image)
    assert ink_marked >= 0.95
    assert page_painted < 0.5
    # AND result.pdf's text layer, turned with its page, reads right in poppler's extractor
    json_path = client.download_result(job_id, tmp_path / "out")
    for number, lines in enumerate(pages_lines, start=1):
        extracted = " ".join(pdf_text(json_path.parent / names.RESULT_PDF, number).split())
        assert character_error_rate(" ".join(lines), extracted) <= 0.02, (number, extracted)
