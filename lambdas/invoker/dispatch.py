"""Capacity for a PaddleOCR-VL job: the endpoint scaled out from zero before its job is planned.

The job itself then goes to the OCR processor, like a CPU job: the processor opens the document,
counts its pages and submits it to the endpoint whole or in chunks (idp/flow/vl_submit.py). The
invoker cannot count pages (it never downloads a document), so it only makes sure capacity is
coming.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from idp.aws.endpoint import EndpointCapacity, ScaleResult, VariantState

if TYPE_CHECKING:
    from idp.aws.alarms import AlarmRearm


@dataclass(frozen=True)
class VlScaleOut:
    """What the invoker did to the endpoint's capacity for one job."""

    result: ScaleResult
    capacity_before: VariantState


class EndpointUnavailable(RuntimeError):
    """The VL endpoint is in a state (Failed, OutOfService, Deleting) that cannot serve jobs."""


class VlEndpointDispatcher:
    """Scales the VL endpoint out from zero when needed; idempotent.

    No call when the variant already has an instance or the endpoint is changing (a scale-in in
    flight is caught by the backlog step scaling). Going 0 → 1, the scale-in alarm is re-armed
    first (idp/aws/alarms.py).
    """

    def __init__(
        self, *, capacity: EndpointCapacity, scale_in_alarm: AlarmRearm | None = None
    ) -> None:
        self._capacity = capacity
        self._scale_in_alarm = scale_in_alarm

    @property
    def target(self) -> str:
        return f"sagemaker:{self._capacity.endpoint_name}"

    def _rearm_scale_in_alarm(self) -> None:
        if self._scale_in_alarm is not None:
            self._scale_in_alarm.rearm(
                f"{self._capacity.endpoint_name} is scaling out from 0 to 1 instance"
            )

    def ensure_capacity(self) -> VlScaleOut:
        result, state = self._capacity.scale_out(before_change=self._rearm_scale_in_alarm)
        if result is ScaleResult.UNAVAILABLE:
            raise EndpointUnavailable(
                f"VL endpoint {self._capacity.endpoint_name} is {state.endpoint_status}"
            )
        return VlScaleOut(result=result, capacity_before=state)
