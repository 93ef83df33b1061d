"""How the stack keeps its log groups: one retention, and encrypted with the stack's key.

Logs carry job ids, object keys and error messages; they are kept under the same key as the
documents and results (CloudWatch Logs uses it as its service principal, for this stack's log
groups only: infra/encryption.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from constructs import Construct


@dataclass(frozen=True)
class LogPolicy:
    retention: logs.RetentionDays
    key: kms.IKey

    def group(self, scope: Construct, construct_id: str, **props: Any) -> logs.LogGroup:
        return logs.LogGroup(
            scope, construct_id, retention=self.retention, encryption_key=self.key, **props
        )
