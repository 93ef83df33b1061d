"""The operations dashboard: queue and DLQ depth, processor health, VL endpoint backlog and
instances, and the jobs completed / failed that the functions publish through Powertools."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from idp.contract import names
from infra.vl_endpoint import VlEndpoint

_PERIOD: Final = Duration.minutes(1)
_WIDTH: Final = 8


def _job_metric(metric_name: str, label: str) -> cloudwatch.MathExpression:
    """A Powertools metric summed over all its dimension sets (service, model, error code...)."""
    return cloudwatch.MathExpression(
        expression=(
            f'SUM(SEARCH(\'Namespace="{names.METRICS_NAMESPACE}" '
            f"MetricName=\"{metric_name}\"', 'Sum', 300))"
        ),
        label=label,
        period=Duration.minutes(5),
        using_metrics={},
    )


def _graph(
    title: str,
    left: Sequence[cloudwatch.IMetric],
    right: Sequence[cloudwatch.IMetric] = (),
) -> cloudwatch.GraphWidget:
    return cloudwatch.GraphWidget(title=title, width=_WIDTH, left=list(left), right=list(right))


class PipelineDashboard(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        job_queue: sqs.IQueue,
        dead_letter_queues: Sequence[tuple[str, sqs.IQueue]],
        processor: lambda_.IFunction,
        functions: Sequence[tuple[str, lambda_.IFunction]],
        vl_endpoint: VlEndpoint | None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.dashboard = cloudwatch.Dashboard(self, "Dashboard")
        self.dashboard.add_widgets(
            _graph(
                "Job queue",
                [
                    job_queue.metric_approximate_number_of_messages_visible(
                        period=_PERIOD, label="Waiting"
                    ),
                    job_queue.metric_approximate_number_of_messages_not_visible(
                        period=_PERIOD, label="In flight"
                    ),
                ],
                [
                    job_queue.metric_approximate_age_of_oldest_message(
                        period=_PERIOD, label="Oldest message (s)"
                    )
                ],
            ),
            _graph(
                "Dead-letter queues",
                [
                    queue.metric_approximate_number_of_messages_visible(period=_PERIOD, label=label)
                    for label, queue in dead_letter_queues
                ],
            ),
            _graph(
                "Jobs",
                [
                    _job_metric(names.Metric.JOBS_COMPLETED, "Completed"),
                    _job_metric(names.Metric.JOBS_FAILED, "Failed"),
                ],
            ),
        )
        self.dashboard.add_widgets(
            _graph(
                "OCR processor",
                [
                    processor.metric_invocations(period=_PERIOD, label="Invocations"),
                    processor.metric_errors(period=_PERIOD, label="Errors"),
                    processor.metric_throttles(period=_PERIOD, label="Throttles"),
                ],
                [
                    processor.metric_duration(period=_PERIOD, statistic="p50", label="p50 (ms)"),
                    processor.metric_duration(
                        period=_PERIOD, statistic="Maximum", label="max (ms)"
                    ),
                ],
            ),
            _graph(
                "Function errors",
                [
                    function.metric_errors(period=_PERIOD, label=name)
                    for name, function in functions
                ],
            ),
        )
        if vl_endpoint is not None:
            self.dashboard.add_widgets(
                _graph(
                    "VL endpoint backlog",
                    [
                        vl_endpoint.metric("ApproximateBacklogSize", statistic="Average"),
                        vl_endpoint.metric(
                            "ApproximateBacklogSizePerInstance", statistic="Average"
                        ),
                    ],
                    [vl_endpoint.metric("HasBacklogWithoutCapacity", statistic="Maximum")],
                ),
                _graph("VL endpoint instances", [vl_endpoint.metric_instance_count()]),
                cloudwatch.AlarmStatusWidget(
                    title="VL scale-in alarm", width=_WIDTH, alarms=[vl_endpoint.scale_in_alarm]
                ),
            )
