"""Office files that cannot be converted end FAILED with their own code, through the local
pipeline, and the same converter then serves the next document: an encrypted one, a truncated
one, one LibreOffice cannot load, a ZIP bomb, and a conversion that runs past its time limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from devkit.office_samples import sample_path
from idp.contract.names import JobStatus, OcrModel
from tests.idp.document.office import files
from tests.local_runs import JOB_TIMEOUT_S, running_pipeline

pytestmark = pytest.mark.ocr

TIME_LIMIT_S = 6.0  # the slow document takes LibreOffice well over a minute; a sample ~1.5 s


def test_bad_office_files_fail_with_their_codes_and_the_converter_serves_the_next(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN a pipeline whose converter stops a conversion after TIME_LIMIT_S, and bad files
    bad = {
        "encrypted.docx": (files.encrypted_docx(), "ENCRYPTED_DOCUMENT"),
        "truncated.docx": (files.truncated_docx(), "CORRUPT_DOCUMENT"),
        "unreadable.docx": (files.unreadable_docx(), "CORRUPT_DOCUMENT"),
        "bomb.docx": (files.zip_bomb_docx(), "INPUT_TOO_LARGE"),
        "slow.docx": (files.slow_docx(), "CONVERSION_TIMEOUT"),
    }
    for name, (data, _code) in bad.items():
        (tmp_path / name).write_bytes(data)
    with running_pipeline(
        tmp_path / "work",
        models_dir,
        vl_enabled=False,
        quiet_functions=True,
        conversion_time_limit_seconds=TIME_LIMIT_S,
    ) as pipeline:
        client = pipeline.client()

        # WHEN each is submitted, and once they have ended, a good document
        jobs = {name: client.submit(tmp_path / name, model=OcrModel.PP_OCRV5) for name in bad}
        records = client.wait([job.job_id for job in jobs.values()], timeout_s=JOB_TIMEOUT_S)
        good = client.submit(sample_path("docx-table", tmp_path), model=OcrModel.PP_OCRV5)
        after = client.wait([good.job_id], timeout_s=JOB_TIMEOUT_S)[good.job_id]
        assert pipeline.runtime is not None
        converter_runs = pipeline.runtime.stats.invocations["OfficeConverter"]

    # THEN each bad file ended FAILED with its own code and a message that says why
    for name, (_data, code) in bad.items():
        record = records[jobs[name].job_id]
        assert record is not None
        assert record["status"] == JobStatus.FAILED, (name, record)
        assert record["error"]["code"] == code, (name, record["error"])
    slow = records[jobs["slow.docx"].job_id]
    assert slow is not None
    assert f"longer than {TIME_LIMIT_S:.0f} s and was stopped" in slow["error"]["message"]
    # ... the ones the processor refused never reached the converter
    assert converter_runs == 4  # unreadable, bomb and slow, then the good one
    # ... and the same converter read the next document
    assert after is not None
    assert after["status"] == JobStatus.COMPLETED, after
