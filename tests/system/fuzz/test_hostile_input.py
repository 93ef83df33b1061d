"""The gate's fuzz run: the regression corpus of hostile documents (devkit.hostile.CORPUS) and a
short hypothesis session with a fixed seed, through the document path of a warm PP-OCRv5 worker
whose address space is capped at the processor's memory (benchmarks/hostile.py).

Every document must end COMPLETED or FAILED with a user's error code, within the memory ceiling
stated in docs/robustness.md; nothing may crash, hang or run out of memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from devkit.hostile import CORPUS
from idp.contract.topology import PROCESSOR_MEMORY_MB
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.ocr

REPO = REPO_ROOT
FUZZ_EXAMPLES = 150  # about a minute on two cores
SEED = 0
# The ceiling every document keeps under (docs/robustness.md): half the function's memory.
PEAK_RSS_CEILING_MB = PROCESSOR_MEMORY_MB / 2


@pytest.fixture(scope="module")
def report(models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    output = tmp_path_factory.mktemp("hostile") / "hostile.json"
    done = subprocess.run(
        [
            sys.executable,
            "benchmarks/hostile.py",
            "--corpus",
            f"--fuzz-examples={FUZZ_EXAMPLES}",
            f"--seed={SEED}",
            f"--models-dir={models_dir}",
            f"--output={output}",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert output.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    result: dict[str, Any] = json.loads(output.read_text())
    result["returncode"] = done.returncode
    result["stdout"] = done.stdout
    return result


def test_every_corpus_document_ends_completed_or_failed_with_its_code(
    report: dict[str, Any],
) -> None:
    outcomes = {outcome["name"]: outcome for outcome in report["corpus"]}
    assert list(outcomes) == list(CORPUS)
    findings = {name: o["detail"] for name, o in outcomes.items() if o["status"] == "FINDING"}
    assert findings == {}
    assert all(o["code"] for o in outcomes.values() if o["status"] == "FAILED")
    # The 203-byte PNG that once took a worker down: refused by its shape before decoding.
    assert outcomes["png-60000x2"]["code"] == "IMAGE_SHAPE_UNSUPPORTED"
    assert "too thin" in outcomes["png-60000x2"]["detail"]
    assert outcomes["png-bomb-30000x30000"]["code"] == "IMAGE_TOO_LARGE"
    assert outcomes["receipt-576x9976"]["status"] == "COMPLETED"


def test_no_document_takes_more_than_the_ceiling(report: dict[str, Any]) -> None:
    peaks = {o["name"]: o["peak_rss_mb"] for o in report["corpus"]}
    assert max(peaks.values()) < PEAK_RSS_CEILING_MB, peaks
    assert report["fuzz"]["peak_rss_mb_max"] < PEAK_RSS_CEILING_MB


def test_a_short_fuzz_session_finds_nothing(report: dict[str, Any]) -> None:
    fuzz = report["fuzz"]
    assert fuzz["documents"] >= FUZZ_EXAMPLES * 2 // 3
    assert fuzz["findings"] == [], report["stdout"][-3000:]
    assert fuzz["completed"] > 0
    assert fuzz["failed"] > 0  # hostile shapes were drawn, not only easy pages
    assert report["returncode"] == 0
