"""`idp delete`: an ended job's results, its result-cache entry and its record go; the input
stays, and a running job is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from devkit.cli.errors import ExitCode
from devkit.cli.main import app
from devkit.synthetic_pdf import born_digital_pdf, mixed_pages
from idp.contract import names
from idp.contract.results import results_prefix
from tests.devkit.cli.conftest import LocalUp

pytestmark = pytest.mark.ocr


def _keys(local_up: LocalUp, bucket: str, prefix: str) -> list[str]:
    listed = local_up.client("s3").list_objects_v2(Bucket=bucket, Prefix=prefix)
    return [item["Key"] for item in listed.get("Contents", [])]


def test_deleting_a_job_deletes_its_results_cache_entry_and_record(
    local_up: LocalUp, tmp_path: Path
) -> None:
    url = ["--endpoint-url", local_up.endpoint_url]
    pdf = tmp_path / "to delete.pdf"
    pdf.write_bytes(born_digital_pdf(mixed_pages()[2:3]))
    submitted = CliRunner().invoke(app, ["submit", str(pdf), "--wait", "300", "--json", *url])
    assert submitted.exit_code == 0, submitted.output
    job = json.loads(submitted.stdout)
    results = local_up.names["results_bucket"]
    record = local_up.jobs_table().get_item(Key={"job_id": job["job_id"]})["Item"]
    assert _keys(local_up, results, results_prefix(job["job_id"], owner=record.get("owner")))

    # WHEN the job is deleted by a prefix of its id
    deleted = CliRunner().invoke(app, ["delete", job["job_id"][:12], "--json", *url])
    assert deleted.exit_code == 0, deleted.output
    uris = json.loads(deleted.stdout)["deleted"]

    # THEN its results and the cache entry its result was filed under are gone
    assert any(f"/{names.RESULT_CACHE_PREFIX}" in uri for uri in uris)
    assert any(uri.endswith(f"/{job['job_id']}/{names.RESULT_JSON}") for uri in uris)
    for uri in uris:
        bucket, key = uri.removeprefix("s3://").split("/", 1)
        assert _keys(local_up, bucket, key) == [], uri
    # AND its record: the job is no more
    status = CliRunner().invoke(app, ["status", job["job_id"], *url])
    assert status.exit_code == ExitCode.NOT_FOUND
    # AND the input stays, the user's
    assert _keys(local_up, local_up.names["input_bucket"], job["key"]) == [job["key"]]


def test_a_running_job_is_not_deleted(local_up: LocalUp) -> None:
    table = local_up.jobs_table()
    job_id = "5ee1ed00" + "2" * 24
    table.put_item(Item={"job_id": job_id, "status": "PROCESSING", "created_at": "2026-12-01"})

    result = CliRunner().invoke(app, ["delete", job_id, "--endpoint-url", local_up.endpoint_url])
    assert result.exit_code == ExitCode.USAGE
    assert "PROCESSING" in result.stderr
    assert table.get_item(Key={"job_id": job_id}).get("Item")
