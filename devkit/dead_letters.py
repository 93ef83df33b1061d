"""The job queue's dead letters: messages that could not name a job, listed and sent back.

A redrive receives a batch from the dead-letter queue, sends each body (and its message
attributes) to the job queue, and deletes it from the dead-letter queue only once it was sent,
so a crash in between leaves a copy in both queues, never in neither. SQS's own
StartMessageMoveTask does the same server-side; this works on any SQS, the local emulator
included (moto has no move tasks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

# SQS's limits: 10 messages per receive; the longest long poll.
_BATCH: Final = 10
_POLL_S: Final = 1


@dataclass(frozen=True)
class DeadLetter:
    message_id: str
    body: str
    receive_count: int  # times received: the job queue's deliveries, and any looks since
    sent_at: str  # epoch milliseconds, as SQS gives SentTimestamp


class DeadLetters:
    def __init__(self, sqs: Any, *, dlq_url: str, queue_url: str) -> None:
        self.sqs = sqs
        self.dlq_url = dlq_url
        self.queue_url = queue_url

    def depth(self) -> int:
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=self.dlq_url, AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"])

    def peek(self, limit: int = _BATCH) -> list[DeadLetter]:
        """Up to `limit` dead letters, left in the queue (visibility timeout 0)."""
        seen: dict[str, DeadLetter] = {}
        while len(seen) < limit:
            messages = self._receive(min(_BATCH, limit - len(seen)), visibility_timeout=0)
            fresh = [m for m in messages if m["MessageId"] not in seen]
            if not fresh:
                break
            for message in fresh:
                seen[message["MessageId"]] = _dead_letter(message)
        return list(seen.values())

    def redrive(self, limit: int | None = None) -> int:
        """Send up to `limit` dead letters (all: None) back to the job queue; returns how many."""
        moved = 0
        while limit is None or moved < limit:
            want = _BATCH if limit is None else min(_BATCH, limit - moved)
            messages = self._receive(want, visibility_timeout=60)
            if not messages:
                break
            for message in messages:
                sent: dict[str, Any] = {"QueueUrl": self.queue_url, "MessageBody": message["Body"]}
                if message.get("MessageAttributes"):
                    sent["MessageAttributes"] = message["MessageAttributes"]
                self.sqs.send_message(**sent)
                self.sqs.delete_message(
                    QueueUrl=self.dlq_url, ReceiptHandle=message["ReceiptHandle"]
                )
                moved += 1
        return moved

    def _receive(self, count: int, *, visibility_timeout: int) -> list[dict[str, Any]]:
        response = self.sqs.receive_message(
            QueueUrl=self.dlq_url,
            MaxNumberOfMessages=count,
            VisibilityTimeout=visibility_timeout,
            WaitTimeSeconds=_POLL_S,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        messages: list[dict[str, Any]] = response.get("Messages", [])
        return messages


def _dead_letter(message: dict[str, Any]) -> DeadLetter:
    attributes = message.get("Attributes", {})
    return DeadLetter(
        message_id=message["MessageId"],
        body=message["Body"],
        receive_count=int(attributes.get("ApproximateReceiveCount", 0)),
        sent_at=str(attributes.get("SentTimestamp", "")),
    )
