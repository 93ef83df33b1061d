"""Scale the idle VL endpoint in to zero instances when its backlog alarm goes to ALARM.

The alarm (ApproximateBacklogSizePerInstance below threshold for a while, missing data
breaching) publishes its state changes to SNS. Only ALARM acts; OK and INSUFFICIENT_DATA are
acknowledged and ignored. An endpoint that is updating cannot take a capacity change: that is
reported (not raised), and the alarm is set back to OK: CloudWatch notifies only on a state
change, so re-arming it is what makes its next evaluation (one period later) notify again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from idp.names import Metric
from lambdas.common.alarms import AlarmRearm
from lambdas.common.aws import is_endpoint_busy
from lambdas.common.endpoint import EndpointCapacity, ScaleResult
from lambdas.common.telemetry import Telemetry

if TYPE_CHECKING:
    from aws_lambda_powertools import Logger
    from mypy_boto3_cloudwatch import CloudWatchClient

ALARM: Final = "ALARM"


class AlarmStateChange(BaseModel):
    """The CloudWatch alarm notification SNS delivers (the fields this handler reads)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    alarm_name: str = Field(alias="AlarmName")
    new_state: str = Field(alias="NewStateValue")
    old_state: str | None = Field(default=None, alias="OldStateValue")
    reason: str | None = Field(default=None, alias="NewStateReason")


class ScaleInAction(StrEnum):
    SCALED_IN = "scaled-in"
    ALREADY_AT_ZERO = "already-at-zero"
    ENDPOINT_UPDATING = "endpoint-updating"
    ENDPOINT_UNAVAILABLE = "endpoint-unavailable"
    NOT_IN_ALARM = "not-in-alarm"
    UNRECOGNIZED = "unrecognized-message"


@dataclass(frozen=True)
class ScaleInReport:
    action: ScaleInAction
    detail: str
    alarm_state: str | None = None
    endpoint_status: str | None = None
    instances_before: int | None = None


def parse_alarm(message: str) -> AlarmStateChange | None:
    try:
        return AlarmStateChange.model_validate(json.loads(message))
    except (json.JSONDecodeError, ValidationError):
        return None


class EndpointScaler:
    """The scale-in handler's logic. Takes the endpoint's `EndpointCapacity`."""

    def __init__(
        self,
        *,
        capacity: EndpointCapacity,
        telemetry: Telemetry,
        logger: Logger,
        cloudwatch: CloudWatchClient | None = None,
    ):
        self._capacity = capacity
        self._telemetry = telemetry
        self._logger = logger
        self._cloudwatch = cloudwatch

    def handle_message(self, message: str) -> ScaleInReport:
        alarm = parse_alarm(message)
        if alarm is None:
            self._logger.error("message is not a CloudWatch alarm notification")
            return ScaleInReport(ScaleInAction.UNRECOGNIZED, "not a CloudWatch alarm notification")
        with self._logger.append_context_keys(alarm=alarm.alarm_name, alarm_state=alarm.new_state):
            report = self.on_alarm_state(alarm.new_state)
            if report.action is ScaleInAction.ENDPOINT_UPDATING and self._cloudwatch is not None:
                AlarmRearm(self._cloudwatch, alarm_name=alarm.alarm_name).rearm(report.detail)
            self._logger.info(report.detail, extra={"action": report.action.value})
            return report

    def on_alarm_state(self, state: str) -> ScaleInReport:
        if state != ALARM:
            return ScaleInReport(
                ScaleInAction.NOT_IN_ALARM, f"alarm is {state}; nothing to do", alarm_state=state
            )
        endpoint = self._capacity.endpoint_name
        try:
            result, before = self._capacity.scale_in()
        except Exception as exc:
            if not is_endpoint_busy(exc):
                raise  # throttling and the like: Lambda's async retries try again
            return ScaleInReport(
                ScaleInAction.ENDPOINT_UPDATING,
                f"endpoint {endpoint} is updating; the alarm is re-armed and its next "
                "evaluation retries",
                alarm_state=state,
            )
        if result is ScaleResult.CHANGED:
            self._telemetry.count(Metric.ENDPOINT_SCALE_IN)
            action = ScaleInAction.SCALED_IN
            detail = f"scaled in from {before.desired_instances} to 0 instances"
        elif result is ScaleResult.ALREADY:
            action, detail = ScaleInAction.ALREADY_AT_ZERO, "is already at 0 instances"
        elif result is ScaleResult.UPDATING:
            action = ScaleInAction.ENDPOINT_UPDATING
            detail = f"is {before.endpoint_status}; next alarm evaluation retries"
        else:
            action = ScaleInAction.ENDPOINT_UNAVAILABLE
            detail = f"is {before.endpoint_status}; nothing to scale in"
        return ScaleInReport(
            action,
            f"endpoint {endpoint} {detail}",
            alarm_state=state,
            endpoint_status=before.endpoint_status,
            instances_before=before.desired_instances,
        )
