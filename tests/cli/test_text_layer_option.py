"""`idp submit --text-layer`: the option reaches the job and decides what happens to its pages."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from devkit.cli.main import app
from devkit.synthetic_pdf import born_digital_pdf, mixed_pages
from tests.cli.conftest import LocalUp

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


def test_an_unknown_text_layer_mode_is_a_usage_error(tmp_path: Path) -> None:
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(born_digital_pdf(mixed_pages()[:1]))
    result = _idp("submit", str(pdf), "--text-layer", "sometimes")
    assert result.exit_code == 2
