"""The VL endpoint's capacity through the SageMaker Python SDK (sagemaker-core).

`EndpointCapacity` (idp/aws/endpoint.py) decides whether a scale-out or scale-in is due,
for the invoker, the scale-in Lambda and this CLI alike; here the variant is read and written
through sagemaker-core's typed `Endpoint` resource (describe, update weights and capacities,
wait). The SDK belongs to the `cli` extra only: no Lambda or image imports this module, and
the CLI imports it only when an `idp endpoint` command runs (it takes seconds to import).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from sagemaker.core.resources import Endpoint  # type: ignore[import-untyped]
from sagemaker.core.shapes import DesiredWeightAndCapacity  # type: ignore[import-untyped]
from sagemaker.core.utils.exceptions import (  # type: ignore[import-untyped]
    FailedStatusError,
    TimeoutExceededError,
)
from sagemaker.core.utils.utils import Unassigned  # type: ignore[import-untyped]

from idp.aws.endpoint import IN_SERVICE, EndpointCapacity, VariantState

if TYPE_CHECKING:
    from collections.abc import Callable

    import boto3


class EndpointWaitFailed(Exception):
    """The endpoint did not reach the wanted state in time, or SageMaker reports it failed."""


class SdkEndpointCapacity(EndpointCapacity):
    """`EndpointCapacity`'s decisions over sagemaker-core's `Endpoint` resource."""

    def __init__(self, *, session: boto3.Session, endpoint_name: str, variant_name: str) -> None:
        # The base class keeps a plain client; reads and writes below go through the SDK.
        super().__init__(
            session.client("sagemaker"), endpoint_name=endpoint_name, variant_name=variant_name
        )
        self._session = session
        self.endpoint = Endpoint.get(endpoint_name, session=session, region=session.region_name)

    def read(self) -> VariantState:
        endpoint = self.endpoint.refresh()
        for variant in _given(endpoint.production_variants) or []:
            if variant.variant_name == self.variant_name:
                current = _given(variant.current_instance_count) or 0
                desired = _given(variant.desired_instance_count)
                return VariantState(
                    endpoint_status=str(endpoint.endpoint_status),
                    desired_instances=int(current if desired is None else desired),
                    current_instances=int(current),
                )
        raise LookupError(f"endpoint {self.endpoint_name!r} has no variant {self.variant_name!r}")

    def _set_desired(self, count: int) -> None:
        self.endpoint.update_weights_and_capacities(
            desired_weights_and_capacities=[
                DesiredWeightAndCapacity(
                    variant_name=self.variant_name, desired_instance_count=count
                )
            ],
            session=self._session,
            region=self._session.region_name,
        )

    @property
    def failure_reason(self) -> str | None:
        reason = _given(self.endpoint.failure_reason)
        return str(reason) if reason else None

    def wait_until(
        self, done: Callable[[VariantState], bool], *, timeout_s: float, poll_s: int
    ) -> VariantState:
        """Wait (the SDK's `wait_for_status`) until the endpoint is InService and `done`."""
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            try:
                self.endpoint.wait_for_status(
                    target_status=IN_SERVICE, poll=poll_s, timeout=max(1, int(remaining))
                )
            except TimeoutExceededError:
                raise EndpointWaitFailed(self._waited_for(timeout_s)) from None
            except FailedStatusError as exc:
                raise EndpointWaitFailed(str(exc)) from None
            state = self.read()
            if state.endpoint_status == IN_SERVICE and done(state):
                return state
            if time.monotonic() + poll_s > deadline:
                raise EndpointWaitFailed(self._waited_for(timeout_s))
            time.sleep(poll_s)

    def _waited_for(self, timeout_s: float) -> str:
        state = self.read()
        return (
            f"endpoint {self.endpoint_name} is still {state.endpoint_status} with "
            f"{state.desired_instances} desired / {state.current_instances} current "
            f"instance(s) after {timeout_s:.0f} s"
        )


def _given(value: Any) -> Any:
    """sagemaker-core marks absent fields with an `Unassigned` object; treat it as None."""
    return None if isinstance(value, Unassigned) else value
