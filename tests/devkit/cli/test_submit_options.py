"""`idp submit`'s options reach the job: --text-layer decides what happens to its pages, and
a job without --model reads with the default text-line model for its language."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from devkit.cli.main import app
from devkit.synthetic_pdf import born_digital_pdf, mixed_pages
from tests.devkit.cli.conftest import LocalUp

pytestmark = pytest.mark.ocr


def _idp(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def _wait_terminal(local_up: LocalUp, job_id: str, timeout_s: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        shown = _idp("status", job_id, "--endpoint-url", local_up.endpoint_url, "--json")
        # Until the invoker has written the record, `idp status` says there is no such job.
        if shown.exit_code == 0:
            record: dict[str, Any] = json.loads(shown.stdout)
            if record["status"] in ("COMPLETED", "FAILED"):
                return record
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} did not end within {timeout_s} s")


def test_submit_with_text_layer_only_fails_a_scanned_page(
    local_up: LocalUp, tmp_path: Path
) -> None:
    # GIVEN a PDF whose second page is a scan
    pdf = tmp_path / "mixed.pdf"
    pdf.write_bytes(born_digital_pdf(mixed_pages()[:2]))

    # WHEN it is submitted with --text-layer only
    submitted = _idp(
        "submit",
        str(pdf),
        "--text-layer",
        "only",
        "--endpoint-url",
        local_up.endpoint_url,
        "--json",
    )
    assert submitted.exit_code == 0, submitted.output

    # THEN the job carries the option and ends FAILED NO_TEXT_LAYER
    record = _wait_terminal(local_up, json.loads(submitted.stdout)["job_id"])
    assert record["options"]["text_layer"] == "only"
    assert record["status"] == "FAILED"
    assert record["error"]["code"] == "NO_TEXT_LAYER"


@pytest.mark.parametrize(
    ("lang", "model"), [("en", "PP-OCRv6"), ("fr", "PP-OCRv6"), ("ru", "PP-OCRv5")]
)
def test_a_job_without_a_model_reads_with_ppocrv6_unless_its_language_needs_ppocrv5(
    local_up: LocalUp, tmp_path: Path, lang: str, model: str
) -> None:
    # GIVEN a born-digital PDF, submitted with a language and no --model
    pdf = tmp_path / "letter.pdf"
    pdf.write_bytes(born_digital_pdf(mixed_pages()[:1]))
    submitted = _idp(
        "submit", str(pdf), "--lang", lang, "--endpoint-url", local_up.endpoint_url, "--json"
    )
    assert submitted.exit_code == 0, submitted.output

    # THEN the job names PP-OCRv6, or PP-OCRv5 for a language PP-OCRv6 does not read
    record = _wait_terminal(local_up, json.loads(submitted.stdout)["job_id"])
    assert (record["model"], record["lang"]) == (model, lang)
    if model == "PP-OCRv6":
        assert record["status"] == "COMPLETED", record.get("error")
    else:  # AND asks for PP-OCRv5's Russian recognizer, which only the hub holds
        assert record["status"] == "FAILED"
        assert record["error"]["code"] == "MODEL_UNAVAILABLE"
        assert "eslav_PP-OCRv5_mobile_rec" in record["error"]["message"]


def test_an_unknown_text_layer_mode_is_a_usage_error(tmp_path: Path) -> None:
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(born_digital_pdf(mixed_pages()[:1]))
    result = _idp("submit", str(pdf), "--text-layer", "sometimes")
    assert result.exit_code == 2
