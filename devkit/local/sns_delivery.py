"""SNS → Lambda delivery: the notifications of a function's topics, reaching it through an SQS
subscription queue, handed to it as SNS event records (asynchronously, as SNS invokes Lambda)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from devkit.local.context import Trigger


class SnsDelivery(Trigger):
    """Delivers what arrives on `target`'s subscription queue to `target`."""

    def run(self) -> None:
        sqs = self.context.endpoint.client("sqs")
        queue_url = self.context.resources.delivery_queue_urls[self.target]
        while not self.context.stop.is_set():
            response = sqs.receive_message(
                QueueUrl=queue_url,
                MaxNumberOfMessages=1,
                WaitTimeSeconds=self.context.settings.poll_wait_seconds,
            )
            for message in response.get("Messages", []):
                event = {"Records": [_sns_record(json.loads(message["Body"]))]}
                # SNS invokes Lambda asynchronously: same retry policy as any async invoke.
                self.invoke(self.target, event)
                sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])


def _sns_record(envelope: dict[str, Any]) -> dict[str, Any]:
    """The Lambda event record of one SNS notification (`envelope`: as SNS wrote it to SQS)."""
    return {
        "EventSource": "aws:sns",
        "EventVersion": "1.0",
        "EventSubscriptionArn": f"{envelope.get('TopicArn')}:{uuid.uuid4()}",
        "Sns": {
            "Type": envelope.get("Type", "Notification"),
            "MessageId": envelope.get("MessageId"),
            "TopicArn": envelope.get("TopicArn"),
            "Subject": envelope.get("Subject"),
            "Message": envelope.get("Message"),
            "Timestamp": envelope.get("Timestamp"),
            "SignatureVersion": envelope.get("SignatureVersion", "1"),
            "Signature": envelope.get("Signature", ""),
            "SigningCertUrl": envelope.get("SigningCertURL", ""),
            "UnsubscribeUrl": envelope.get("UnsubscribeURL", ""),
            "MessageAttributes": envelope.get("MessageAttributes", {}),
        },
    }
