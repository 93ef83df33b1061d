"""Re-arming the VL endpoint's scale-in alarm.

CloudWatch notifies only on a state change. After a scale-in the idle alarm stays in ALARM
(missing data counts as breaching), so when the endpoint next scales 0 → 1 and its job ends
before a busy datapoint is recorded, the alarm never changes state again, never notifies, and
the instance runs on. Whoever changes the endpoint's capacity without the alarm noticing sets
it back to OK, so that its next breaching evaluation notifies again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient


class AlarmRearm:
    """Sets one alarm back to OK (cloudwatch:SetAlarmState on that alarm only)."""

    def __init__(self, cloudwatch: CloudWatchClient, *, alarm_name: str) -> None:
        self._cloudwatch = cloudwatch
        self.alarm_name = alarm_name

    def rearm(self, reason: str) -> None:
        self._cloudwatch.set_alarm_state(
            AlarmName=self.alarm_name, StateValue="OK", StateReason=reason[:1000]
        )
