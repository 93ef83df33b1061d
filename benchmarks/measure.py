"""Helpers shared by the benchmark scripts: durations from job records and percentiles."""

from __future__ import annotations

from collections.abc import Mapping

from idp.contract.timestamps import parse_timestamp


def seconds_between(record: Mapping[str, object], start: str, end: str) -> float:
    """Seconds from one of a job record's timestamps to another."""
    return (parse_timestamp(record[end]) - parse_timestamp(record[start])).total_seconds()


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, round(fraction * len(ordered) + 0.5))
    return ordered[min(rank, len(ordered)) - 1]


def spread(values: list[float], digits: int) -> dict[str, float | None]:
    """p50, p95 and max of `values`, rounded to `digits`; all None when there are none."""
    if not values:
        return {"p50": None, "p95": None, "max": None}
    return {
        "p50": round(percentile(values, 0.50), digits),
        "p95": round(percentile(values, 0.95), digits),
        "max": round(max(values), digits),
    }
