"""Scale-in handler: the backlog alarm's notification sets the idle VL endpoint to zero."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from botocore.exceptions import ClientError

from lambdas.scale_in.scaling import EndpointScaler, ScaleInAction
from tests.lambdas.support import (
    SCALE_IN_ALARM,
    VL_ENDPOINT,
    EmulatedAws,
    Faults,
    alarm_state,
    sns_message,
)

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient


def alarm(state: str) -> str:
    message = sns_message("sns_cloudwatch_alarm_alarm.json")
    message["NewStateValue"] = state
    return json.dumps(message)


@pytest.mark.parametrize(
    ("instances", "state", "action", "instances_before", "instances_after"),
    [
        pytest.param(1, "ALARM", ScaleInAction.SCALED_IN, 1, 0, id="scaled-in-to-zero"),
        pytest.param(0, "ALARM", ScaleInAction.ALREADY_AT_ZERO, 0, 0, id="already-at-zero"),
        pytest.param(1, "OK", ScaleInAction.NOT_IN_ALARM, None, 1, id="ok-changes-nothing"),
        pytest.param(
            1,
            "INSUFFICIENT_DATA",
            ScaleInAction.NOT_IN_ALARM,
            None,
            1,
            id="no-data-changes-nothing",
        ),
    ],
)
def test_the_alarm_state_and_the_endpoint_capacity_decide_the_scale_in(
    aws: EmulatedAws,
    scaler: EndpointScaler,
    instances: int,
    state: str,
    action: ScaleInAction,
    instances_before: int | None,
    instances_after: int,
) -> None:
    # GIVEN the VL endpoint running one instance, or already at zero
    aws.set_vl_instances(instances)

    # WHEN the idle-backlog alarm reports a state: ALARM scales in, any other changes nothing
    report = scaler.handle_message(alarm(state))

    # THEN the endpoint is set to zero instances, or reported as already at zero, or left alone
    assert report.action is action
    assert report.instances_before == instances_before
    assert aws.vl_instances() == instances_after


def test_alarm_spares_an_endpoint_scaled_out_within_its_window_and_re_arms(
    aws: EmulatedAws, rearming_scaler: EndpointScaler, scale_in_alarm: CloudWatchClient
) -> None:
    # GIVEN an instance the invoker started a minute ago (re-arming the alarm), whose alarm
    # window still holds the breaching minutes the endpoint spent at zero
    aws.set_vl_instances(1, changed_ago=timedelta(minutes=1))

    # WHEN the alarm (10 periods of 60 s) goes to ALARM
    report = rearming_scaler.handle_message(alarm("ALARM"))

    # THEN the instance keeps running and the alarm is OK, so a real idle window notifies again
    assert report.action is ScaleInAction.ENDPOINT_SETTLING
    assert aws.vl_instances() == 1
    assert alarm_state(scale_in_alarm, SCALE_IN_ALARM) == "OK"


def test_alarm_scales_in_an_endpoint_unchanged_for_its_whole_window(
    aws: EmulatedAws, scaler: EndpointScaler
) -> None:
    # GIVEN an instance running, unchanged, for just over the alarm's 10-minute window
    aws.set_vl_instances(1, changed_ago=timedelta(minutes=11))

    # WHEN the alarm goes to ALARM THEN it is scaled in
    assert scaler.handle_message(alarm("ALARM")).action is ScaleInAction.SCALED_IN
    assert aws.vl_instances() == 0


@pytest.mark.parametrize("update_starts", ["before-the-alarm", "under-the-update-call"])
def test_alarm_while_the_endpoint_is_updating_reports_it_and_changes_nothing(
    aws: EmulatedAws, scaler: EndpointScaler, faults: Faults, update_starts: str
) -> None:
    # GIVEN an endpoint with one instance in the middle of an update, or one that begins an
    # update between our describe and our update call
    aws.set_vl_instances(1)
    if update_starts == "before-the-alarm":
        faults.force_endpoint_status(VL_ENDPOINT, "Updating")
    else:
        faults.fail_calls(
            aws.sagemaker,
            "UpdateEndpointWeightsAndCapacities",
            code="ValidationException",
            message=f'Cannot update in-progress endpoint "{VL_ENDPOINT}".',
        )

    # WHEN the alarm goes to ALARM
    report = scaler.handle_message(alarm("ALARM"))

    # THEN it is reported (not raised) as updating, leaving the retry to the next evaluation
    assert report.action is ScaleInAction.ENDPOINT_UPDATING
    assert "evaluation retries" in report.detail
    assert aws.vl_instances() == 1


def test_throttled_describe_is_raised_for_lambdas_async_retry(
    aws: EmulatedAws, scaler: EndpointScaler, faults: Faults
) -> None:
    # GIVEN SageMaker throttles DescribeEndpoint
    aws.set_vl_instances(1)
    faults.fail_calls(aws.sagemaker, "DescribeEndpoint")

    # WHEN the alarm goes to ALARM
    # THEN the error propagates (Lambda retries the asynchronous invocation)
    with pytest.raises(ClientError, match="ThrottlingException"):
        scaler.handle_message(alarm("ALARM"))
    assert aws.vl_instances() == 1


def test_a_message_that_is_not_an_alarm_is_ignored(
    aws: EmulatedAws, scaler: EndpointScaler
) -> None:
    # GIVEN the endpoint at one instance
    aws.set_vl_instances(1)

    # WHEN something other than an alarm notification arrives
    report = scaler.handle_message(json.dumps({"hello": "world"}))

    # THEN nothing changes
    assert report.action is ScaleInAction.UNRECOGNIZED
    assert aws.vl_instances() == 1


def test_alarm_while_updating_is_re_armed_so_it_notifies_again(
    aws: EmulatedAws,
    rearming_scaler: EndpointScaler,
    scale_in_alarm: CloudWatchClient,
    faults: Faults,
) -> None:
    # GIVEN the backlog alarm in ALARM and an endpoint with one instance in an update
    aws.set_vl_instances(1)
    faults.force_endpoint_status(VL_ENDPOINT, "Updating")

    # WHEN the ALARM notification arrives
    report = rearming_scaler.handle_message(alarm("ALARM"))

    # THEN the alarm is set back to OK: still breaching, it goes to ALARM and notifies again
    assert report.action is ScaleInAction.ENDPOINT_UPDATING
    assert alarm_state(scale_in_alarm, SCALE_IN_ALARM) == "OK"
    assert aws.vl_instances() == 1
