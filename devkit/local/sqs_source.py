"""Lambda's SQS event source mapping on the job queue: batches of messages to the invoker, with
partial batch responses; the queue's redrive policy moves what keeps failing to the DLQ."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from devkit.local.context import Trigger

if TYPE_CHECKING:
    from mypy_boto3_sqs.type_defs import MessageTypeDef

logger = logging.getLogger("devkit.local")


class SqsEventSource(Trigger):
    """Polls the job queue and hands each batch to `target` (synchronously, as Lambda does)."""

    def run(self) -> None:
        sqs = self.context.endpoint.client("sqs")
        settings, queue_url = self.context.settings, self.context.resources.queue_url
        while not self.context.stop.is_set():
            response = sqs.receive_message(
                QueueUrl=queue_url,
                MaxNumberOfMessages=settings.invoker_batch_size,
                WaitTimeSeconds=settings.poll_wait_seconds,
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
            )
            messages = response.get("Messages", [])
            if not messages:
                continue
            event = {"Records": [self._record(message) for message in messages]}
            result = self.invoke(self.target, event)
            if not result.ok:
                # The whole batch failed: every message returns after its visibility timeout.
                logger.error("invoker failed: %s %s", result.error_type, result.error_message)
                continue
            failed = {
                item["itemIdentifier"]
                for item in (result.payload or {}).get("batchItemFailures", [])
            }
            done = [m for m in messages if m["MessageId"] not in failed]
            if done:
                sqs.delete_message_batch(
                    QueueUrl=queue_url,
                    Entries=[
                        {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                        for i, m in enumerate(done)
                    ],
                )

    def _record(self, message: MessageTypeDef) -> dict[str, Any]:
        resources = self.context.resources
        return {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message["Body"],
            "attributes": message.get("Attributes", {}),
            "messageAttributes": message.get("MessageAttributes", {}),
            "md5OfBody": message.get("MD5OfBody", ""),
            "eventSource": "aws:sqs",
            "eventSourceARN": resources.queue_arn,
            "awsRegion": resources.region,
        }
