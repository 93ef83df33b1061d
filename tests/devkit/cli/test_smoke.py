"""`idp smoke` against a real `idp local up` (embedded AWS, real handlers, real PP-OCRv5, and
PaddleOCR-VL's plumbing with the substitute engine)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from devkit.cli.main import app
from devkit.local.emulator import AwsEndpoint
from tests.devkit.cli.conftest import LocalUp

pytestmark = pytest.mark.ocr

# Wide enough that rich never wraps a table cell.
WIDE = {"COLUMNS": "200"}


def _idp(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, list(args), env={**WIDE, **(env or {})})


def _smoke(local_up: LocalUp, *args: str) -> Result:
    """`idp smoke ARGS` against the running local stack."""
    return _idp("smoke", "--endpoint-url", local_up.endpoint_url, *args)


def _rows(result: Result) -> dict[str, dict[str, Any]]:
    return {row["model"]: row for row in json.loads(result.stdout)}


def _cpu_only_stack(local_up: LocalUp, stack_name: str) -> None:
    """A CloudFormation stack in the emulator whose outputs name the local resources, without
    VlEndpointName, as a stack deployed with vlEnabled=false has."""
    names = local_up.names
    outputs = {
        "InputBucketName": names["input_bucket"],
        "ResultsBucketName": names["results_bucket"],
        "JobsTableName": names["jobs_table"],
        "JobQueueUrl": names["job_queue_url"],
    }
    template = {
        "Resources": {"Placeholder": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    cloudformation = AwsEndpoint(url=local_up.endpoint_url).client("cloudformation")
    cloudformation.create_stack(StackName=stack_name, TemplateBody=json.dumps(template))


def test_smoke_passes_for_every_model_the_local_stack_runs(local_up: LocalUp) -> None:
    # GIVEN `idp local up --vl-substitute` (PP-OCRv5 weights seeded, the VL endpoint at 0)

    # WHEN the smoke runs against it with its defaults
    result = _smoke(local_up, "--json")

    # THEN it exits 0: PP-OCRv5, PP-OCRv6 and PaddleOCR-VL (the stack has its endpoint) all
    # COMPLETED and read the generated page back
    assert result.exit_code == 0, result.output
    rows = _rows(result)
    assert set(rows) == {"PP-OCRv5", "PP-OCRv6", "PP-StructureV3", "PaddleOCR-VL"}
    for row in rows.values():
        assert row["status"] == "COMPLETED"
        assert row["ok"] is True
        assert row["cer"] <= 0.05
        assert row["first_line"]
        assert row["seconds"] > 0
    # AND the VL row says it was served by the substitute engine, not the real model
    assert rows["PaddleOCR-VL"]["substitute"] is True
    assert rows["PP-OCRv5"]["substitute"] is False
    assert rows["PP-OCRv6"]["substitute"] is False
    assert rows["PP-StructureV3"]["substitute"] is False


@pytest.mark.parametrize(
    ("asked", "model", "exit_code", "shown", "verdict"),
    [
        # the model, its status, the check and the first recognized line
        ("PP-OCRv5", "PP-OCRv5", 0, ("COMPLETED", "pass", "Invoice 2041 was issued"), "1/1"),
        # PP-StructureV3 by its alias, its regions read in order
        ("structure", "PP-StructureV3", 0, ("COMPLETED", "pass", "Total amount payable"), "1/1"),
    ],
)
def test_smoke_table_shows_a_row_per_model_and_how_many_passed(
    local_up: LocalUp,
    asked: str,
    model: str,
    exit_code: int,
    shown: tuple[str, ...],
    verdict: str,
) -> None:
    # GIVEN the running local stack

    # WHEN the smoke checks one model without --json
    result = _smoke(local_up, "--model", asked)

    # THEN it exits 0 only if the model passed, and its row and the verdict say so
    assert result.exit_code == exit_code, result.output
    (row,) = [line for line in result.stdout.splitlines() if line.strip().startswith(model)]
    for text in shown:
        assert text in row
    assert f"{verdict} models passed" in result.stdout


def test_smoke_fails_when_a_models_weights_are_missing(local_up: LocalUp) -> None:
    # GIVEN the local stack, whose model cache has PP-OCRv5's recognizer for English and
    # Chinese but not its Latin one (it comes from the model hub, which the local processor may
    # not use), and PP-OCRv6, whose one recognizer reads French

    # WHEN the smoke checks both in French
    result = _smoke(
        local_up, "--model", "PP-OCRv5", "--model", "PP-OCRv6", "--lang", "fr", "--json"
    )

    # THEN it exits 1: PP-OCRv5 FAILED with the recorded error, PP-OCRv6 still passed
    assert result.exit_code == 1, result.output
    rows = _rows(result)
    failed = rows["PP-OCRv5"]
    assert failed["status"] == "FAILED"
    assert failed["ok"] is False
    assert failed["error"]["code"] == "MODEL_UNAVAILABLE"
    assert failed["problem"].startswith("MODEL_UNAVAILABLE: ")
    assert rows["PP-OCRv6"]["ok"] is True


def test_smoke_fails_when_jobs_do_not_finish_in_time(local_up: LocalUp) -> None:
    # GIVEN the local stack

    # WHEN the smoke gives the job no time at all
    result = _smoke(local_up, "-m", "ocr", "--timeout", "0", "--json")

    # THEN it exits 1 and reports a timeout
    assert result.exit_code == 1, result.output
    row = _rows(result)["PP-OCRv5"]
    assert row["status"] == "TIMEOUT"
    assert row["problem"].startswith("TIMEOUT")


def test_smoke_of_a_cpu_only_stack_checks_the_cpu_models_only(local_up: LocalUp) -> None:
    # GIVEN a deployed stack (found through its CloudFormation outputs) without a VL endpoint
    _cpu_only_stack(local_up, "cpu-only")
    aws = {"AWS_ENDPOINT_URL": local_up.endpoint_url}

    # WHEN the smoke runs against it by stack name, with its defaults
    result = _idp("smoke", "--stack-name", "cpu-only", "--json", env=aws)

    # THEN only the CPU models are checked, and they pass
    assert result.exit_code == 0, result.output
    assert list(_rows(result)) == ["PP-OCRv5", "PP-OCRv6", "PP-StructureV3"]


def test_smoke_refuses_paddleocr_vl_on_a_stack_without_it(local_up: LocalUp) -> None:
    # GIVEN a stack deployed without the VL endpoint
    _cpu_only_stack(local_up, "cpu-only-2")
    aws = {"AWS_ENDPOINT_URL": local_up.endpoint_url}

    # WHEN the smoke is asked for PaddleOCR-VL there
    result = _idp("smoke", "--stack-name", "cpu-only-2", "--model", "vl", env=aws)

    # THEN it exits 2 before submitting anything, saying VL is not deployed
    assert result.exit_code == 2
    assert "PaddleOCR-VL is not deployed" in result.stderr
