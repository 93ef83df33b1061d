"""SNS-subscribed Lambda functions: an event's notifications, one at a time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from aws_lambda_powertools.utilities.data_classes import SNSEvent


def each_message(event: dict[str, Any], handle: Callable[[str], Any]) -> list[dict[str, Any]]:
    """`handle(message)` for every SNS record of `event`, in order; each answer (a dataclass)
    as a dict."""
    return [asdict(handle(record.sns.message)) for record in SNSEvent(event).records]
