"""Scale the idle VL endpoint in to zero instances when its backlog alarm goes to ALARM.

The alarm (ApproximateBacklogSizePerInstance below threshold for a while, missing data
breaching) publishes its state changes to SNS. Only ALARM acts; OK and INSUFFICIENT_DATA are
acknowledged and ignored. Two cases are left alone and the alarm is set back to OK instead
(CloudWatch notifies only on a state change, so re-arming it is what makes its next evaluation
notify again):
- the endpoint is updating: it cannot take a capacity change now;
- the endpoint changed less than one alarm window ago: it was just scaled out (the invoker
  re-armed the alarm, and the window still holds the breaching minutes at zero instances), so
  its instance cannot have been idle for the whole window yet.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from idp.aws.alarms import AlarmRearm
from idp.aws.endpoint import EndpointCapacity, ScaleResult
from idp.aws.errors import is_endpoint_busy
from idp.aws.telemetry import Telemetry
from idp.contract.names import SCALE_IN_EVALUATION_PERIODS, SCALE_IN_PERIOD_SECONDS, Metric

if TYPE_CHECKING:
    from aws_lambda_powertools import Logger
    from mypy_boto3_cloudwatch import CloudWatchClient

ALARM: Final = "ALARM"


class AlarmTrigger(BaseModel):
    """The alarm's definition as the notification carries it; the stack's values if absent."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    period: float = Field(default=SCALE_IN_PERIOD_SECONDS, alias="Period", gt=0)
    evaluation_periods: int = Field(
        default=SCALE_IN_EVALUATION_PERIODS, alias="EvaluationPeriods", gt=0
    )


class AlarmStateChange(BaseModel):
    """The CloudWatch alarm notification SNS delivers (the fields this handler reads)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    alarm_name: str = Field(alias="AlarmName")
    new_state: str = Field(alias="NewStateValue")
    old_state: str | None = Field(default=None, alias="OldStateValue")
    reason: str | None = Field(default=None, alias="NewStateReason")
    trigger: AlarmTrigger = Field(default_factory=AlarmTrigger, alias="Trigger")

    @property
    def window(self) -> timedelta:
        """How long the alarm looks back: period × evaluation periods."""
        return timedelta(seconds=self.trigger.period * self.trigger.evaluation_periods)


class ScaleInAction(StrEnum):
    SCALED_IN = "scaled-in"
    ALREADY_AT_ZERO = "already-at-zero"
    ENDPOINT_UPDATING = "endpoint-updating"
    ENDPOINT_SETTLING = "endpoint-settling"
    ENDPOINT_UNAVAILABLE = "endpoint-unavailable"
    NOT_IN_ALARM = "not-in-alarm"
    UNRECOGNIZED = "unrecognized-message"


# Outcomes after which the alarm is set back to OK, so that it notifies again.
_REARM: Final = frozenset({ScaleInAction.ENDPOINT_UPDATING, ScaleInAction.ENDPOINT_SETTLING})


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


@dataclass(frozen=True, kw_only=True)
class EndpointScaler:
    """The scale-in handler's logic. Takes the endpoint's `EndpointCapacity`."""

    capacity: EndpointCapacity
    telemetry: Telemetry
    logger: Logger
    cloudwatch: CloudWatchClient | None = None

    def handle_message(self, message: str) -> ScaleInReport:
        alarm = parse_alarm(message)
        if alarm is None:
            self.logger.error("message is not a CloudWatch alarm notification")
            return ScaleInReport(ScaleInAction.UNRECOGNIZED, "not a CloudWatch alarm notification")
        with self.logger.append_context_keys(alarm=alarm.alarm_name, alarm_state=alarm.new_state):
            report = self.on_alarm_state(alarm.new_state, window=alarm.window)
            if report.action in _REARM and self.cloudwatch is not None:
                AlarmRearm(self.cloudwatch, alarm_name=alarm.alarm_name).rearm(report.detail)
            self.logger.info(report.detail, extra={"action": report.action.value})
            return report

    def on_alarm_state(self, state: str, *, window: timedelta | None = None) -> ScaleInReport:
        if state != ALARM:
            return ScaleInReport(
                ScaleInAction.NOT_IN_ALARM, f"alarm is {state}; nothing to do", alarm_state=state
            )
        endpoint = self.capacity.endpoint_name
        try:
            result, before = self.capacity.scale_in(unchanged_for=window)
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
            self.telemetry.count(Metric.ENDPOINT_SCALE_IN)
            action = ScaleInAction.SCALED_IN
            detail = f"scaled in from {before.desired_instances} to 0 instances"
        elif result is ScaleResult.ALREADY:
            action, detail = ScaleInAction.ALREADY_AT_ZERO, "is already at 0 instances"
        elif result is ScaleResult.UPDATING:
            action = ScaleInAction.ENDPOINT_UPDATING
            detail = f"is {before.endpoint_status}; next alarm evaluation retries"
        elif result is ScaleResult.SETTLING:
            action = ScaleInAction.ENDPOINT_SETTLING
            detail = (
                f"changed at {before.last_modified}, less than the alarm's window ago; the "
                "alarm is re-armed and a later evaluation decides"
            )
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
