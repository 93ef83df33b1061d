"""Capacity of the VL endpoint's variant: read it, scale it out to 1 or in to 0, idempotently."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from mypy_boto3_sagemaker import SageMakerClient

IN_SERVICE: Final = "InService"
# While an endpoint is in one of these states SageMaker rejects capacity updates.
CHANGING_STATES: Final = frozenset(
    {"Creating", "Updating", "SystemUpdating", "RollingBack", "UpdateRollbackFailed"}
)


class ScaleResult(StrEnum):
    CHANGED = "changed"  # an update was requested
    ALREADY = "already"  # the variant already had the wanted capacity
    UPDATING = "updating"  # the endpoint is changing; no update requested
    SETTLING = "settling"  # changed more recently than the caller's idle window; no update
    UNAVAILABLE = "unavailable"  # Failed / OutOfService / Deleting: nothing sensible to do


@dataclass(frozen=True)
class VariantState:
    endpoint_status: str
    desired_instances: int
    current_instances: int
    last_modified: datetime | None = None  # the endpoint's LastModifiedTime

    @property
    def is_changing(self) -> bool:
        return self.endpoint_status in CHANGING_STATES

    def changed_within(self, period: timedelta) -> bool:
        return self.last_modified is not None and datetime.now(UTC) - self.last_modified < period

    @property
    def has_capacity(self) -> bool:
        return max(self.desired_instances, self.current_instances) > 0


class EndpointCapacity:
    """One variant of one endpoint. Takes its SageMaker client; errors are left to the caller."""

    def __init__(self, sagemaker: SageMakerClient, *, endpoint_name: str, variant_name: str):
        self._sagemaker = sagemaker
        self.endpoint_name = endpoint_name
        self.variant_name = variant_name

    def read(self) -> VariantState:
        described = self._sagemaker.describe_endpoint(EndpointName=self.endpoint_name)
        for variant in described.get("ProductionVariants", []):
            if variant["VariantName"] == self.variant_name:
                current = variant.get("CurrentInstanceCount", 0)
                return VariantState(
                    endpoint_status=described["EndpointStatus"],
                    desired_instances=variant.get("DesiredInstanceCount", current),
                    current_instances=current,
                    last_modified=described.get("LastModifiedTime"),
                )
        raise LookupError(f"endpoint {self.endpoint_name!r} has no variant {self.variant_name!r}")

    def scale_out(
        self, *, before_change: Callable[[], None] | None = None
    ) -> tuple[ScaleResult, VariantState]:
        """0 → 1 instance when the endpoint is InService with no capacity; otherwise no call.

        `before_change` runs just before the update is requested; if it raises, nothing changes
        (so a retry finds the endpoint still at 0 and runs it again).
        """
        state = self.read()
        if state.is_changing:
            return ScaleResult.UPDATING, state
        if state.endpoint_status != IN_SERVICE:
            return ScaleResult.UNAVAILABLE, state
        if state.desired_instances > 0:
            return ScaleResult.ALREADY, state
        if before_change is not None:
            before_change()
        self._set_desired(1)
        return ScaleResult.CHANGED, state

    def scale_in(
        self, *, unchanged_for: timedelta | None = None
    ) -> tuple[ScaleResult, VariantState]:
        """→ 0 instances when the endpoint is InService with capacity; otherwise no call.

        With `unchanged_for`, an endpoint modified more recently than that is left alone
        (SETTLING): an instance scaled out a minute ago cannot have been idle for ten.
        """
        state = self.read()
        if state.is_changing:
            return ScaleResult.UPDATING, state
        if state.endpoint_status != IN_SERVICE:
            return ScaleResult.UNAVAILABLE, state
        if not state.has_capacity:
            return ScaleResult.ALREADY, state
        if unchanged_for is not None and state.changed_within(unchanged_for):
            return ScaleResult.SETTLING, state
        self._set_desired(0)
        return ScaleResult.CHANGED, state

    def _set_desired(self, count: int) -> None:
        self._sagemaker.update_endpoint_weights_and_capacities(
            EndpointName=self.endpoint_name,
            DesiredWeightsAndCapacities=[
                {"VariantName": self.variant_name, "DesiredInstanceCount": count}
            ],
        )
