"""The operations dashboard and the stack outputs a user reads."""

from __future__ import annotations

import json
from typing import Any

import pytest

from idp.contract import names
from idp.contract.names import Output
from tests.infra.support import Synthesized, ref


def _dashboard_body(synth: Synthesized) -> str:
    """The dashboard JSON with every CloudFormation reference rendered as <Ref>."""
    _, dashboard = synth.only("AWS::CloudWatch::Dashboard")
    body: Any = dashboard["DashboardBody"]
    parts = body["Fn::Join"][1] if isinstance(body, dict) else [body]
    return "".join(part if isinstance(part, str) else "<Ref>" for part in parts)


@pytest.mark.parametrize(
    "shown",
    [
        '"ApproximateNumberOfMessagesVisible"',  # queue and DLQ depth
        '"ApproximateAgeOfOldestMessage"',
        '"label":"Job DLQ"',
        '"label":"Async failures"',
        '"Errors"',  # processor and function errors
        '"Duration"',
        '"Throttles"',
        '"ApproximateBacklogSize"',  # VL endpoint backlog
        '"ApproximateBacklogSizePerInstance"',
        '"HasBacklogWithoutCapacity"',
        '"CPUUtilization"',  # VL instances (one sample per instance per minute)
        names.Metric.JOBS_COMPLETED.value,
        names.Metric.JOBS_FAILED.value,
        names.METRICS_NAMESPACE,
    ],
)
def test_dashboard_shows(full: Synthesized, shown: str) -> None:
    assert shown in _dashboard_body(full)


def test_dashboard_body_is_valid_json_once_references_resolve(full: Synthesized) -> None:
    body = _dashboard_body(full).replace("<Ref>", "x")
    widgets = json.loads(body)["widgets"]
    titles = {w["properties"]["title"] for w in widgets}
    assert {"Job queue", "Dead-letter queues", "Jobs", "OCR processor"} <= titles
    assert {"VL endpoint backlog", "VL endpoint instances"} <= titles


def test_cpu_only_dashboard_has_no_endpoint_widgets(cpu_only: Synthesized) -> None:
    body = _dashboard_body(cpu_only)
    assert "ApproximateBacklogSize" not in body
    assert "Job queue" in body


def test_stack_outputs_every_name_a_user_needs(full: Synthesized) -> None:
    outputs = full.template["Outputs"]
    assert set(outputs) == {output.value for output in Output}
    assert outputs[Output.JOBS_TABLE]["Value"] == ref(full.only("AWS::DynamoDB::Table")[0])
    assert outputs[Output.JOB_QUEUE_URL]["Value"] == ref(full.job_queue()[0])
    assert outputs[Output.INPUT_BUCKET]["Value"] == ref(full.logical_id("Storage/InputBucket"))
    assert outputs[Output.VL_ENDPOINT]["Value"] == f"{names.STACK_NAME}-vl"
    key, _ = full.only("AWS::KMS::Key")
    assert outputs[Output.DATA_KEY_ARN]["Value"] == {"Fn::GetAtt": [key, "Arn"]}


def test_cpu_only_outputs_leave_out_the_endpoint(cpu_only: Synthesized) -> None:
    assert set(cpu_only.template["Outputs"]) == {o.value for o in Output} - {Output.VL_ENDPOINT}
