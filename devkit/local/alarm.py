"""The VL endpoint's scale-in alarm, evaluated as CloudWatch does: ApproximateBacklogSizePerInstance
below the threshold (missing data breaching) for the evaluation periods; state changes are set on
the emulator's alarm, and a change to ALARM is delivered to its topic."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from idp.contract import names
from idp.contract.timestamps import utc_now
from idp.contract.topology import Topic

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_cloudwatch.literals import StateValueType
    from mypy_boto3_sns import SNSClient

    from devkit.local.context import ServiceContext


@dataclass(frozen=True)
class ScaleInAlarm:
    """Samples `backlog_per_instance` (None: no instance, no datapoint) once per period; the
    states it moves to are recorded in the runtime's stats."""

    context: ServiceContext
    backlog_per_instance: Callable[[], float | None]

    def run(self) -> None:
        cloudwatch = self.context.endpoint.client("cloudwatch")
        sns = self.context.endpoint.client("sns")
        settings = self.context.settings
        window: list[float | None] = []
        while not self.context.stop.wait(settings.alarm_period_seconds):
            window.append(self.backlog_per_instance())
            window = window[-settings.alarm_evaluation_periods :]
            if len(window) < settings.alarm_evaluation_periods:
                continue
            # The scale-in handler may have re-armed the alarm (set it to OK) meanwhile.
            alarm_name = self.context.resources.scale_in_alarm
            (alarm,) = cloudwatch.describe_alarms(AlarmNames=[alarm_name])["MetricAlarms"]
            state = str(alarm["StateValue"])
            # Missing data (no instance, no datapoint) is treated as breaching, like the stack.
            breaching = all(
                value is None or value < names.SCALE_IN_BACKLOG_THRESHOLD for value in window
            )
            new_state: StateValueType = "ALARM" if breaching else "OK"
            if new_state != state:
                self._change(cloudwatch, sns, (state, new_state), window)

    def _change(
        self,
        cloudwatch: CloudWatchClient,
        sns: SNSClient,
        states: tuple[str, StateValueType],
        window: list[float | None],
    ) -> None:
        """Set the alarm's new state; a move to ALARM notifies the alarm's topic."""
        context = self.context
        old_state, new_state = states
        context.stats.alarm_states.append(new_state)
        reason = f"backlog per instance over the last {len(window)} periods: {window}"
        alarm_name = context.resources.scale_in_alarm
        cloudwatch.set_alarm_state(AlarmName=alarm_name, StateValue=new_state, StateReason=reason)
        if new_state != "ALARM":
            return
        sns.publish(
            TopicArn=context.resources.topic_arns[Topic.SCALE_IN],
            Subject=f'ALARM: "{alarm_name}"',
            Message=json.dumps(
                {
                    "AlarmName": alarm_name,
                    "NewStateValue": new_state,
                    "OldStateValue": old_state,
                    "NewStateReason": reason,
                    "StateChangeTime": utc_now(),
                    "Region": context.resources.region,
                    "Trigger": {
                        "MetricName": "ApproximateBacklogSizePerInstance",
                        "Namespace": "AWS/SageMaker",
                        "Dimensions": [
                            {"name": "EndpointName", "value": context.resources.vl_endpoint}
                        ],
                        "Threshold": names.SCALE_IN_BACKLOG_THRESHOLD,
                        "ComparisonOperator": "LessThanThreshold",
                        "Period": context.settings.alarm_period_seconds,
                        "EvaluationPeriods": context.settings.alarm_evaluation_periods,
                        "TreatMissingData": "breaching",
                    },
                }
            ),
        )
