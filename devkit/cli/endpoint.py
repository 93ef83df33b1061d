"""`idp endpoint status|up|down`: the PaddleOCR-VL SageMaker async endpoint, by hand.

The endpoint is read and scaled through the SageMaker Python SDK (devkit/cli/vl_endpoint.py),
with the same scale-out/scale-in decisions as the invoker and the scale-in Lambda; a scale-out
re-arms the idle alarm as the invoker's does. The backlog comes from CloudWatch.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Final, NoReturn

import typer
from rich.table import Table

from devkit.cli.common import (
    JsonOption,
    StackTarget,
    boto3_session,
    err,
    out,
    pipeline_names,
    with_stack_target,
)
from devkit.cli.errors import ExitCode
from idp.aws.endpoint import IN_SERVICE, ScaleResult, VariantState
from idp.contract import names

if TYPE_CHECKING:
    from collections.abc import Callable

    import boto3

    from devkit.cli.vl_endpoint import SdkEndpointCapacity
    from devkit.local.emulator import AwsEndpoint

endpoint_app = typer.Typer(
    help="The PaddleOCR-VL SageMaker async endpoint: show it, warm it up, scale it in.",
    no_args_is_help=True,
)

SAGEMAKER_NAMESPACE: Final = "AWS/SageMaker"
BACKLOG_METRIC: Final = "ApproximateBacklogSize"
# SageMaker publishes endpoint metrics once a minute; look back far enough to find the last one.
BACKLOG_LOOKBACK: Final = timedelta(minutes=15)

TimeoutOption = Annotated[
    float, typer.Option("--timeout", min=0, help="seconds to wait for the endpoint")
]


@dataclass(frozen=True)
class EndpointReport:
    """What `idp endpoint status|up|down` show (and print with --json)."""

    endpoint: str
    status: str
    desired_instances: int
    current_instances: int
    backlog: float | None  # ApproximateBacklogSize; None when CloudWatch has no datapoint
    backlog_at: str | None
    scale_in_alarm: str | None
    alarm_state: str | None
    failure_reason: str | None = None


@dataclass(frozen=True)
class _Target:
    """The VL endpoint of one stack or emulator, and how to reach it."""

    endpoint: AwsEndpoint
    session: boto3.Session
    endpoint_name: str
    scale_in_alarm: str | None

    @property
    def poll_s(self) -> int:
        # An emulator answers at once; SageMaker takes minutes and rate-limits its API.
        return 1 if self.endpoint.url else 10

    def capacity(self) -> SdkEndpointCapacity:
        from devkit.cli.vl_endpoint import SdkEndpointCapacity

        return SdkEndpointCapacity(
            session=self.session,
            endpoint_name=self.endpoint_name,
            variant_name=names.VL_VARIANT_NAME,
        )

    def rearm_scale_in_alarm(self) -> None:
        """As the invoker does before a 0 → 1 (idp/aws/alarms.py): CloudWatch notifies
        only on state changes, and an alarm left in ALARM would never scale this back in."""
        if self.scale_in_alarm is None:
            return
        from idp.aws.alarms import AlarmRearm

        AlarmRearm(self.session.client("cloudwatch"), alarm_name=self.scale_in_alarm).rearm(
            f"idp endpoint up: {self.endpoint_name} is scaling out from 0 to 1 instance"
        )

    def report(self, capacity: SdkEndpointCapacity, state: VariantState) -> EndpointReport:
        cloudwatch = self.session.client("cloudwatch")
        backlog, backlog_at = latest_backlog(cloudwatch, self.endpoint_name)
        return EndpointReport(
            endpoint=self.endpoint_name,
            status=state.endpoint_status,
            desired_instances=state.desired_instances,
            current_instances=state.current_instances,
            backlog=backlog,
            backlog_at=backlog_at.isoformat() if backlog_at else None,
            scale_in_alarm=self.scale_in_alarm,
            alarm_state=alarm_state(cloudwatch, self.scale_in_alarm),
            failure_reason=capacity.failure_reason,
        )


def latest_backlog(cloudwatch: Any, endpoint_name: str) -> tuple[float | None, datetime | None]:
    """The newest ApproximateBacklogSize datapoint of the last minutes, if CloudWatch has one."""
    now = datetime.now(UTC)
    answer = cloudwatch.get_metric_statistics(
        Namespace=SAGEMAKER_NAMESPACE,
        MetricName=BACKLOG_METRIC,
        Dimensions=[{"Name": "EndpointName", "Value": endpoint_name}],
        StartTime=now - BACKLOG_LOOKBACK,
        EndTime=now + timedelta(minutes=1),
        Period=60,
        Statistics=["Maximum"],
    )
    points = sorted(answer.get("Datapoints", []), key=lambda point: point["Timestamp"])
    if not points:
        return None, None
    return float(points[-1]["Maximum"]), points[-1]["Timestamp"]


def alarm_state(cloudwatch: Any, alarm_name: str | None) -> str | None:
    if not alarm_name:
        return None
    alarms = cloudwatch.describe_alarms(AlarmNames=[alarm_name]).get("MetricAlarms", [])
    return str(alarms[0]["StateValue"]) if alarms else None


def _target(stack: StackTarget) -> _Target:
    endpoint = stack.endpoint
    pipeline = pipeline_names(endpoint, stack.stack_name)
    if pipeline.vl_endpoint is None:
        where = endpoint.url or f"stack {stack.stack_name}"
        err.print(
            f"[red]{where} has no PaddleOCR-VL endpoint[/] (a stack deployed with "
            "vlEnabled=false has none)"
        )
        raise typer.Exit(code=ExitCode.USAGE)
    return _Target(
        endpoint=endpoint,
        session=boto3_session(endpoint),
        endpoint_name=pipeline.vl_endpoint,
        scale_in_alarm=pipeline.vl_scale_in_alarm,
    )


def _backlog_text(report: EndpointReport) -> str:
    if report.backlog is None:
        return "n/a (no datapoint in the last 15 minutes)"
    return f"{report.backlog:g} (at {report.backlog_at})"


def _print_report(report: EndpointReport, *, as_json: bool, note: str | None = None) -> None:
    if as_json:
        print(json.dumps(asdict(report)))
        return
    style = "green" if report.status == IN_SERVICE else "yellow"
    table = Table(title=f"VL endpoint {report.endpoint}", show_header=False)
    table.add_column("what", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_row("status", f"[{style}]{report.status}[/]")
    table.add_row(
        "instances (desired / current)", f"{report.desired_instances} / {report.current_instances}"
    )
    table.add_row("backlog", _backlog_text(report))
    if report.scale_in_alarm:
        table.add_row("idle alarm", f"{report.alarm_state or 'n/a'} ({report.scale_in_alarm})")
    if report.failure_reason:
        table.add_row("failure reason", report.failure_reason)
    out.print(table)
    if note:
        out.print(note)


def _scale(
    capacity: SdkEndpointCapacity,
    scale: Callable[[], tuple[ScaleResult, VariantState]],
    what: str,
    *,
    timeout_s: float,
    poll_s: int,
) -> ScaleResult:
    """Ask for the change; while the endpoint is updating, wait and ask again."""
    deadline = time.monotonic() + timeout_s
    while True:
        result, before = scale()
        if result is ScaleResult.UNAVAILABLE:
            reason = f": {capacity.failure_reason}" if capacity.failure_reason else ""
            err.print(
                f"[red]cannot {what}:[/] endpoint {capacity.endpoint_name} is "
                f"{before.endpoint_status}{reason}"
            )
            raise typer.Exit(code=ExitCode.UNHEALTHY)
        if result is not ScaleResult.UPDATING:
            done = "requested" if result is ScaleResult.CHANGED else "not needed"
            err.print(
                f"{what} {done}: {capacity.endpoint_name} had {before.desired_instances} "
                "desired instance(s)"
            )
            return result
        if time.monotonic() + poll_s > deadline:
            err.print(f"[red]cannot {what}:[/] the endpoint stayed {before.endpoint_status}")
            raise typer.Exit(code=ExitCode.UNHEALTHY)
        err.print(f"endpoint is {before.endpoint_status}; waiting to {what}")
        time.sleep(poll_s)


def _wait(
    target: _Target,
    capacity: SdkEndpointCapacity,
    done: Callable[[VariantState], bool],
    *,
    timeout_s: float,
    as_json: bool,
) -> VariantState:
    from devkit.cli.vl_endpoint import EndpointWaitFailed

    try:
        return capacity.wait_until(done, timeout_s=timeout_s, poll_s=target.poll_s)
    except EndpointWaitFailed as exc:
        _fail(target, capacity, str(exc), as_json)


def _fail(target: _Target, capacity: SdkEndpointCapacity, message: str, as_json: bool) -> NoReturn:
    err.print(f"[red]{message}[/]")
    _print_report(target.report(capacity, capacity.read()), as_json=as_json)
    raise typer.Exit(code=ExitCode.UNHEALTHY)


@endpoint_app.command("status")
@with_stack_target
def endpoint_status(
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """Show the endpoint's status, its instances (desired / current) and its backlog."""
    target = _target(stack)
    capacity = target.capacity()
    _print_report(target.report(capacity, capacity.read()), as_json=as_json)


@endpoint_app.command("up")
@with_stack_target
def endpoint_up(
    timeout: TimeoutOption = 1800.0,
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """Scale the endpoint 0 → 1 and wait until it is InService with an instance.

    A warm-up before a batch: submit the batch once this returns. The idle alarm is re-armed,
    as on every scale-out, so it scales the endpoint back in when it sees no backlog.
    Exits 1 if the endpoint is not InService with an instance within --timeout.
    """
    target = _target(stack)
    capacity = target.capacity()
    _scale(
        capacity,
        lambda: capacity.scale_out(before_change=target.rearm_scale_in_alarm),
        "scale out",
        timeout_s=timeout,
        poll_s=target.poll_s,
    )
    state = _wait(
        target, capacity, lambda s: s.current_instances >= 1, timeout_s=timeout, as_json=as_json
    )
    _print_report(
        target.report(capacity, state),
        as_json=as_json,
        note="Submit the batch now: the idle alarm scales the endpoint back in once it has "
        "seen no backlog for its evaluation window."
        if target.scale_in_alarm
        else None,
    )


@endpoint_app.command("down")
@with_stack_target
def endpoint_down(
    wait: Annotated[
        bool, typer.Option("--wait/--no-wait", help="wait until no instance is left")
    ] = True,
    timeout: TimeoutOption = 1800.0,
    *,
    stack: StackTarget,
    as_json: JsonOption = False,
) -> None:
    """Scale the endpoint in to 0 instances now; requests sent later wait for a scale-out."""
    target = _target(stack)
    capacity = target.capacity()
    _scale(capacity, capacity.scale_in, "scale in", timeout_s=timeout, poll_s=target.poll_s)
    state = capacity.read()
    if wait:
        state = _wait(
            target,
            capacity,
            lambda s: s.desired_instances == 0 and s.current_instances == 0,
            timeout_s=timeout,
            as_json=as_json,
        )
    _print_report(target.report(capacity, state), as_json=as_json)
