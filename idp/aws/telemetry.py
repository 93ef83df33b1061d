"""Business metrics as CloudWatch embedded-metric-format lines (Powertools single_metric).

Each metric is flushed on its own so it can carry its own dimension (the model, the error code);
a shared Powertools `Metrics` object would force one dimension set per invocation.
"""

from __future__ import annotations

from aws_lambda_powertools import single_metric
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from idp.contract.names import Metric


class Telemetry:
    """Counts business events under one namespace and service."""

    def __init__(self, *, namespace: str, service: str) -> None:
        self.namespace = namespace
        self.service = service

    def count(self, metric: Metric, *, value: float = 1, **dimensions: str) -> None:
        # single_metric prints its line even with POWERTOOLS_METRICS_DISABLED set; honour it.
        if is_metrics_disabled():
            return
        with single_metric(
            name=metric.value,
            unit=MetricUnit.Count,
            value=value,
            namespace=self.namespace,
            default_dimensions={"service": self.service, **dimensions},
        ):
            pass

    def job_routed(self, model: str) -> None:
        self.count(Metric.JOBS_ROUTED, model=model)

    def job_failed(self, code: str) -> None:
        self.count(Metric.JOBS_FAILED, error_code=code)
