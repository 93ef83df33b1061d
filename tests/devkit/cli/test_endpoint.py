"""`idp endpoint status|up|down` against the local stack: the SageMaker control plane in the
emulator, the VL container server started and stopped by the local runtime."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from devkit.cli.main import app
from devkit.local.emulator import AwsEndpoint
from devkit.local.pipeline import LocalPipeline
from devkit.local.settings import LocalSettings
from idp.contract import names
from tests.devkit.cli.conftest import LocalUp

WIDE = {"COLUMNS": "200"}
LOCAL_STACK = "paddle-idp-local"  # a stack of this name names its alarm as the local stack does


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Iterator[LocalPipeline]:
    """The stack `idp local up --vl-substitute` starts, but with an idle alarm too slow to act
    while a test runs: `up` re-arms the alarm, which would otherwise scale in seconds later."""
    settings = LocalSettings(
        work_dir=tmp_path_factory.mktemp("endpoint-cli"),
        models_dir=models_dir,
        vl_substitute=True,
        alarm_period_seconds=3600,
    )
    with LocalPipeline(settings) as running:
        yield running


def _idp(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, list(args), env={**WIDE, **(env or {})})


def _url(pipeline: LocalPipeline) -> str:
    assert pipeline.endpoint.url is not None
    return pipeline.endpoint.url


def _report(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _wait_for(predicate: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


def _container_running(pipeline: LocalPipeline) -> bool:
    """Whether the local runtime has the VL container server process running."""
    assert pipeline.runtime is not None
    return pipeline.runtime.vl.running


def _set_instances(pipeline: LocalPipeline, count: int) -> None:
    assert pipeline.resources is not None
    pipeline.endpoint.client("sagemaker").update_endpoint_weights_and_capacities(
        EndpointName=pipeline.resources.vl_endpoint,
        DesiredWeightsAndCapacities=[
            {"VariantName": names.VL_VARIANT_NAME, "DesiredInstanceCount": count}
        ],
    )


def _stack(endpoint: AwsEndpoint, stack_name: str, outputs: dict[str, str]) -> None:
    """A CloudFormation stack in the emulator with these outputs (a deployed stack's names)."""
    template = {
        "Resources": {"Placeholder": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    endpoint.client("cloudformation").create_stack(
        StackName=stack_name, TemplateBody=json.dumps(template)
    )


def _outputs(pipeline: LocalPipeline, *, vl: bool) -> dict[str, str]:
    resources = pipeline.resources
    assert resources is not None
    outputs = {
        "InputBucketName": resources.input_bucket,
        "ResultsBucketName": resources.results_bucket,
        "JobsTableName": resources.jobs_table,
        "JobQueueUrl": resources.queue_url,
    }
    if vl:
        outputs["VlEndpointName"] = resources.vl_endpoint
    return outputs


def test_status_shows_state_instances_and_backlog(pipeline: LocalPipeline) -> None:
    # GIVEN the local stack with its VL endpoint scaled in to 0
    _set_instances(pipeline, 0)

    # WHEN its status is asked for, as JSON and as a table
    report = _report(_idp("endpoint", "status", "--endpoint-url", _url(pipeline), "--json"))
    table = _idp("endpoint", "status", "--endpoint-url", _url(pipeline))

    # THEN it is InService with 0 desired / 0 current instances, and no backlog datapoint
    assert report["endpoint"] == "paddle-idp-local-vl"
    assert report["status"] == "InService"
    assert (report["desired_instances"], report["current_instances"]) == (0, 0)
    assert report["backlog"] is None
    assert report["scale_in_alarm"] == "paddle-idp-local-vl-backlog-idle"
    assert table.exit_code == 0, table.output
    assert "InService" in table.stdout
    assert "0 / 0" in table.stdout
    assert "n/a" in table.stdout


def test_up_scales_out_to_one_instance_and_starts_the_container(
    pipeline: LocalPipeline,
) -> None:
    # GIVEN the VL endpoint at 0 instances and no container running
    _set_instances(pipeline, 0)
    _wait_for(lambda: not _container_running(pipeline), 30, "the container to stop")

    # WHEN the endpoint is warmed up
    report = _report(
        _idp("endpoint", "up", "--endpoint-url", _url(pipeline), "--timeout", "60", "--json")
    )

    # THEN it is InService with 1 instance, the local runtime starts the container server,
    # and the idle alarm is re-armed (OK) so that it can scale the endpoint in again
    assert report["status"] == "InService"
    assert (report["desired_instances"], report["current_instances"]) == (1, 1)
    assert report["alarm_state"] == "OK"
    _wait_for(lambda: _container_running(pipeline), 30, "the container to start")


def test_up_on_a_warm_endpoint_changes_nothing(pipeline: LocalPipeline) -> None:
    # GIVEN the VL endpoint already at 1 instance
    _set_instances(pipeline, 1)

    # WHEN it is warmed up again
    result = _idp("endpoint", "up", "--endpoint-url", _url(pipeline), "--json")

    # THEN it stays at 1 instance and says no scale-out was needed
    report = _report(result)
    assert (report["desired_instances"], report["current_instances"]) == (1, 1)
    assert "scale out not needed" in result.stderr


def test_down_scales_in_to_zero_and_stops_the_container(pipeline: LocalPipeline) -> None:
    # GIVEN the VL endpoint at 1 instance with its container running
    _set_instances(pipeline, 1)
    _wait_for(lambda: _container_running(pipeline), 30, "the container to start")

    # WHEN it is scaled in
    report = _report(_idp("endpoint", "down", "--endpoint-url", _url(pipeline), "--json"))

    # THEN it has 0 instances and the local runtime stops the container server
    assert report["status"] == "InService"
    assert (report["desired_instances"], report["current_instances"]) == (0, 0)
    _wait_for(lambda: not _container_running(pipeline), 30, "the container to stop")


def test_status_finds_the_endpoint_through_the_stack_outputs(pipeline: LocalPipeline) -> None:
    # GIVEN a deployed stack (CloudFormation outputs) whose VlEndpointName is the VL endpoint,
    # reached through AWS_ENDPOINT_URL rather than --endpoint-url
    _stack(pipeline.endpoint, LOCAL_STACK, _outputs(pipeline, vl=True))
    _set_instances(pipeline, 0)
    aws = {"AWS_ENDPOINT_URL": _url(pipeline)}

    # WHEN its status is asked for by stack name
    result = _idp("endpoint", "status", "--stack-name", LOCAL_STACK, "--json", env=aws)

    # THEN the endpoint and the stack's scale-in alarm are found and described
    report = _report(result)
    assert report["endpoint"] == "paddle-idp-local-vl"
    assert report["scale_in_alarm"] == "paddle-idp-local-vl-backlog-idle"
    assert report["alarm_state"] is not None
    assert (report["desired_instances"], report["current_instances"]) == (0, 0)


def test_a_stack_without_vl_has_no_endpoint_to_control(pipeline: LocalPipeline) -> None:
    # GIVEN a stack deployed with vlEnabled=false (no VlEndpointName output)
    _stack(pipeline.endpoint, "cpu-only", _outputs(pipeline, vl=False))
    aws = {"AWS_ENDPOINT_URL": _url(pipeline)}

    # WHEN the endpoint is to be warmed up
    result = _idp("endpoint", "up", "--stack-name", "cpu-only", env=aws)

    # THEN the command exits 2 and says there is no VL endpoint
    assert result.exit_code == 2
    assert "has no PaddleOCR-VL endpoint" in result.stderr


def test_a_missing_stack_is_reported_not_raised(pipeline: LocalPipeline) -> None:
    # GIVEN no stack of that name
    aws = {"AWS_ENDPOINT_URL": _url(pipeline)}

    # WHEN its endpoint's status is asked for
    result = _idp("endpoint", "status", "--stack-name", "NoSuchStack", env=aws)

    # THEN the command exits 3 (not found) with a message naming the stack
    assert result.exit_code == 3
    assert "NoSuchStack" in result.stderr


@pytest.mark.ocr
def test_after_up_the_idle_alarm_scales_the_endpoint_back_in(local_up: LocalUp) -> None:
    # GIVEN a real `idp local up` whose idle endpoint sits at 0 with its alarm in ALARM
    url = local_up.endpoint_url

    def idle() -> bool:
        report = _report(_idp("endpoint", "status", "--endpoint-url", url, "--json"))
        return bool(report["current_instances"] == 0 and report["alarm_state"] == "ALARM")

    _wait_for(idle, 120, "the idle alarm to go to ALARM")

    # WHEN the endpoint is warmed up and no work arrives
    up = _report(_idp("endpoint", "up", "--endpoint-url", url, "--json"))

    # THEN it had come up, and the re-armed alarm scales it back in (no instance runs on)
    assert up["current_instances"] == 1
    _wait_for(
        lambda: (
            _report(_idp("endpoint", "status", "--endpoint-url", url, "--json"))[
                "current_instances"
            ]
            == 0
        ),
        120,
        "the idle alarm to scale the endpoint in",
    )
