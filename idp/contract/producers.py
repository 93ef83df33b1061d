"""Who submitted a job, and which input keys that producer may have read.

A job's owner is the IAM principal that sent it: the SQS message's `SenderId` for a direct
message (`AROA…:session` for a role, `AIDA…` for a user), the uploader's `principalId` for an
S3 event. By default every producer is one trust domain: anyone allowed to send to the queue
may name any key of the input bucket. With `producerPrefixes` set, each producer, named by its
principal id (a role's unique id matches every session of the role), may name only keys under
its own prefixes, and a principal the mapping does not name may name none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from idp.contract.errors import InvalidMessage, KeyNotAllowed


def principal_id(sender: str | None) -> str | None:
    """`AWS:AROAEXAMPLE:session` (S3's form) or `AROAEXAMPLE:session` (SQS's) → the id as SQS
    gives it; None stays None."""
    if not sender:
        return None
    return sender.removeprefix("AWS:")


@dataclass(frozen=True)
class ProducerPrefixes:
    """The input keys each producer may name; empty: one trust domain (any key)."""

    prefixes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_json(cls, text: str | None) -> ProducerPrefixes:
        """`{"AROAEXAMPLE": ["uploads/team-a/"], ...}` (a string for one prefix is fine)."""
        if not text or not text.strip():
            return cls()
        document = json.loads(text)
        if not isinstance(document, dict):
            raise ValueError("producerPrefixes must map principal ids to key prefixes")
        prefixes: dict[str, tuple[str, ...]] = {}
        for principal, value in document.items():
            values = [value] if isinstance(value, str) else value
            if not values or not all(isinstance(v, str) and v for v in values):
                raise ValueError(f"producerPrefixes[{principal!r}] must be key prefixes")
            prefixes[str(principal)] = tuple(values)
        return cls(prefixes)

    @property
    def one_trust_domain(self) -> bool:
        return not self.prefixes

    def allowed(self, owner: str | None) -> tuple[str, ...]:
        """The key prefixes `owner` may name (a role's id covers each of its sessions)."""
        if owner is None:
            return ()
        return self.prefixes.get(owner) or self.prefixes.get(owner.partition(":")[0]) or ()

    def check(self, owner: str | None, key: str) -> None:
        """KeyNotAllowed unless `owner` may have `key` read."""
        if self.one_trust_domain:
            return
        if owner is None:
            raise InvalidMessage("the message has no sender, so no producer can be checked")
        allowed = self.allowed(owner)
        if not any(key.startswith(prefix) for prefix in allowed):
            where = ", ".join(allowed) if allowed else "no prefix (not a producer of this stack)"
            raise KeyNotAllowed(
                f"producer {owner} may not submit key {key!r}: it may name keys under {where}"
            )
