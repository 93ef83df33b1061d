"""What a function calls, one construct per kind of outgoing edge (each an infra/functions.py
`Call`; its incoming edges are infra/triggered_function.py's triggers): the environment variables
that name the target, the grants the call needs, and the client in the functions' code that
makes it.

- `InvokesProcessor`: PROCESSOR_FUNCTION_NAME; idp.flow.lambda_invoke.LambdaProcessorInvoker.
- `SubmitsToVlEndpoint`: VL_ENDPOINT_NAME; idp.flow.vl_submit.VlEndpointSubmitter.
- `PublishesJobEvents`: EVENT_BUS_NAME; lambdas.events.publisher.JobEventPublisher.
- `ConvertsOfficeDocuments`: CONVERTER_FUNCTION_NAME;
  idp.flow.office_conversion.LambdaDocumentConverter.
- `ScalesVlEndpoint`: VL_ENABLED, VL_ENDPOINT_NAME, VL_VARIANT_NAME, VL_SCALE_IN_ALARM_NAME;
  idp.aws.endpoint.EndpointCapacity and idp.aws.alarms.AlarmRearm.

A call to the VL endpoint in a CPU-only stack (no endpoint) names no target ("") and grants
nothing, so every function keeps the variables its topology spec declares.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from idp.contract import names
from idp.contract.env.functions import Env

if TYPE_CHECKING:
    from aws_cdk import aws_iam as iam

    from infra.converter import OfficeConverter
    from infra.job_events import JobEventBus
    from infra.processor import OcrProcessor
    from infra.storage import Storage
    from infra.vl_endpoint import VlEndpoint


@dataclass(frozen=True)
class InvokesProcessor:
    """An asynchronous invoke of the OCR processor: the invoker's dispatch, and the completion
    handler's hand-over of a VL result. Not `granted` (a CPU-only stack's completion handler,
    which never sees a VL result), the function still names the processor but cannot invoke it.
    """

    processor: OcrProcessor
    granted: bool = True

    @property
    def environment(self) -> Mapping[Env, str]:
        return {Env.PROCESSOR_FUNCTION: self.processor.function.function_name}

    def grant(self, role: iam.Role) -> None:
        if self.granted:
            self.processor.grant_invoke(role)


@dataclass(frozen=True)
class SubmitsToVlEndpoint:
    """The processor's PaddleOCR-VL jobs: a manifest and an asynchronous inference per document
    or chunk, and reading the outputs back when the endpoint's results are handed over."""

    endpoint: VlEndpoint | None
    storage: Storage

    @property
    def environment(self) -> Mapping[Env, str]:
        return {Env.VL_ENDPOINT_NAME: self.endpoint.endpoint_name if self.endpoint else ""}

    def grant(self, role: iam.Role) -> None:
        if self.endpoint is None:
            return
        self.storage.grant_write_vl_manifests(role)
        self.endpoint.grant_invoke_async(role)
        self.storage.grant_read_vl_outputs(role)


@dataclass(frozen=True)
class ScalesVlEndpoint:
    """The VL endpoint's capacity (0 → 1 by the invoker, → 0 by the scale-in handler), and the
    scale-in alarm whoever scales re-arms."""

    endpoint: VlEndpoint | None

    @property
    def environment(self) -> Mapping[Env, str]:
        endpoint = self.endpoint
        return {
            Env.VL_ENABLED: "true" if endpoint else "false",
            Env.VL_ENDPOINT_NAME: endpoint.endpoint_name if endpoint else "",
            Env.VL_VARIANT_NAME: names.VL_VARIANT_NAME,
            Env.VL_SCALE_IN_ALARM_NAME: endpoint.scale_in_alarm.alarm_name if endpoint else "",
        }

    def grant(self, role: iam.Role) -> None:
        if self.endpoint is not None:
            self.endpoint.grant_scale(role)  # out 0 -> 1 or in to 0, re-arming the alarm


@dataclass(frozen=True)
class PublishesJobEvents:
    """PutEvents of job-finished events onto the pipeline's bus (which EventBridge encrypts with
    the stack's key under its own key-policy statement)."""

    bus: JobEventBus

    @property
    def environment(self) -> Mapping[Env, str]:
        return {Env.EVENT_BUS_NAME: self.bus.bus.event_bus_name}

    def grant(self, role: iam.Role) -> None:
        self.bus.grant_put_events(role)


@dataclass(frozen=True)
class ConvertsOfficeDocuments:
    """The processor's synchronous invoke of the Office converter, one per Office document."""

    converter: OfficeConverter

    @property
    def environment(self) -> Mapping[Env, str]:
        return {Env.CONVERTER_FUNCTION: self.converter.function.function_name}

    def grant(self, role: iam.Role) -> None:
        self.converter.grant_invoke(role)
