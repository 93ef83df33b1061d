"""The Office converter image, run the way Lambda runs it, converts real Office documents.

The image's entrypoint and CMD handler start under a Lambda Runtime API (devkit.local.
lambda_container: the FAKE of the Lambda service) with the stack's environment for the function,
a read-only root file system, a non-root user, its memory limit and its /tmp (sized for the
largest input). The processor runs as the local run's worker and calls it synchronously, as in
the cloud.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devkit.local.pipeline import LocalPipeline
from devkit.office_samples import own_text, sample_path
from devkit.textmetrics import character_error_rate
from idp.contract.names import JobStatus, OcrModel
from tests.idp.document.office import files
from tests.images.support import image_pipeline, running_containers
from tests.local_runs import finished_job

pytestmark = pytest.mark.image

JOB_TIMEOUT_S = 600.0
TIME_LIMIT_S = 8.0


@pytest.fixture(scope="module")
def pipeline(
    converter_image: str, models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LocalPipeline]:
    with image_pipeline(
        tmp_path_factory,
        models_dir,
        converter_image=converter_image,
        conversion_time_limit_seconds=TIME_LIMIT_S,
    ) as running:
        yield running


def _run(pipeline: LocalPipeline, path: Path) -> tuple[dict[str, Any], dict[str, Any] | None]:
    client = pipeline.client()
    record = finished_job(client, path, model=OcrModel.PP_OCRV5, timeout_s=JOB_TIMEOUT_S)
    completed = record["status"] == JobStatus.COMPLETED
    result = client.result_document(record["job_id"]) if completed else None
    return dict(record), result


def test_image_converts_a_docx_that_reads_as_its_own_text(
    pipeline: LocalPipeline, converter_image: str, tmp_path: Path
) -> None:
    path = sample_path("docx-hyperlinks", tmp_path)
    record, result = _run(pipeline, path)
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    assert result is not None
    assert result["source"]["conversion"]["converter"] == "LibreOffice"
    assert result["source"]["conversion"]["version"].startswith("7.4.")
    read = " ".join(result["text"].split())
    assert character_error_rate(own_text(path), read) <= 0.01
    assert running_containers(converter_image), (
        "no container of the converter image is running (the warm environment)"
    )


def test_image_gives_a_spreadsheets_cells_as_tables(
    pipeline: LocalPipeline, tmp_path: Path
) -> None:
    record, result = _run(pipeline, sample_path("xlsx-five-sheets", tmp_path))
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    assert result is not None
    assert len(result["pages"]) == 5
    assert all(page["blocks"][0]["label"] == "sheet" for page in result["pages"])


def test_image_stops_a_conversion_at_its_limit_and_serves_the_next(
    pipeline: LocalPipeline, tmp_path: Path
) -> None:
    slow = tmp_path / "slow.docx"
    slow.write_bytes(files.slow_docx())
    record, _ = _run(pipeline, slow)
    assert record["status"] == JobStatus.FAILED
    assert record["error"]["code"] == "CONVERSION_TIMEOUT", record["error"]
    record, result = _run(pipeline, sample_path("pptx-paragraphs", tmp_path))
    assert record["status"] == JobStatus.COMPLETED, record.get("error")
    assert result is not None
    assert len(result["pages"]) == 3
