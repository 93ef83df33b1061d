"""Timestamps as the job record and the emulated services write them (ISO 8601, UTC, ms, "Z"),
and durations in milliseconds as timings record them."""

from __future__ import annotations

from datetime import UTC, datetime


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc_now() -> str:
    return iso(datetime.now(UTC))


def parse_timestamp(value: object) -> datetime:
    """A record's ISO-8601 timestamp (as `utc_now` writes it) back to an aware datetime."""
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def ms(seconds: float) -> float:
    """A duration in milliseconds, to 0.1 ms, as `timings_ms` records it."""
    return round(seconds * 1000, 1)
