"""What every emulated service of one local runtime is given, and what they count."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from devkit.local.emulator import AwsEndpoint
    from devkit.local.functions import Invocation
    from devkit.local.resources import LocalResources
    from devkit.local.settings import LocalSettings
    from idp.contract.topology import Function


@dataclass
class RuntimeStats:
    """What the runtime observed; read by tests and the load benchmark."""

    invocations: Counter[str] = field(default_factory=Counter)
    processor_events: Counter[str] = field(default_factory=Counter)  # job id → invocations
    chunk_events: Counter[str] = field(default_factory=Counter)  # "<job id>/<chunk>" → events
    failed_deliveries: list[dict[str, Any]] = field(default_factory=list)
    alarm_states: list[str] = field(default_factory=list)
    # Seen through the DynamoDB fault proxy (when it runs): job id → invocations that claimed
    # its merge.
    merge_claims: dict[str, set[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class ServiceContext:
    """The emulator's endpoint, the provisioned names, the runtime's knobs, the shared counts,
    and the event that tells every loop to end."""

    endpoint: AwsEndpoint
    resources: LocalResources
    settings: LocalSettings
    stats: RuntimeStats = field(default_factory=RuntimeStats)
    stop: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class Trigger:
    """A service that invokes one function when its events arrive (an event source mapping, an
    SNS subscription, a schedule): `run` is its loop, until the runtime stops."""

    context: ServiceContext
    target: Function
    invoke: Callable[[Function, Any], Invocation]  # synchronous or async, as AWS invokes it

    def run(self) -> None:
        raise NotImplementedError
