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
