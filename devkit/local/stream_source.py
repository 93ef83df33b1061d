"""Lambda's DynamoDB stream event source mapping on the jobs table: records in order, from the
oldest, filtered as the stack filters them (a job's new image COMPLETED or FAILED), to the events
function in batches, with partial batch responses.

A record the function reports failed is sent again (with the records after it on the shard),
up to the stack's retry attempts; then, as Lambda's on-failure destination would, it is counted
as a failed delivery and the shard moves on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from devkit.local.context import Trigger
from idp.contract.names import TERMINAL_STATUSES
from idp.contract.topology import EVENTS_BATCH_SIZE, EVENTS_RETRY_ATTEMPTS

logger = logging.getLogger("devkit.local")


def passes_filter(record: Mapping[str, Any]) -> bool:
    """The stack's filter: {"dynamodb": {"NewImage": {"status": {"S": [terminal statuses]}}}}."""
    status = record.get("dynamodb", {}).get("NewImage", {}).get("status", {}).get("S")
    return status in TERMINAL_STATUSES


class TableStreamSource(Trigger):
    """Polls each shard of the jobs table's stream and hands `target` its filtered records."""

    def run(self) -> None:
        streams = self.context.endpoint.client("dynamodbstreams")
        arn = self.context.resources.table_stream_arn
        iterators: dict[str, str] = {}
        pending: list[dict[str, Any]] = []  # records read, not yet delivered
        attempts = 0
        while not self.context.stop.is_set():
            for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
                shard_id = shard["ShardId"]
                if shard_id not in iterators:
                    iterators[shard_id] = streams.get_shard_iterator(
                        StreamArn=arn, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
                    )["ShardIterator"]
                if len(pending) < EVENTS_BATCH_SIZE:
                    response = streams.get_records(ShardIterator=iterators[shard_id])
                    iterators[shard_id] = response["NextShardIterator"]
                    pending += [
                        self._lambda_record(r) for r in response["Records"] if passes_filter(r)
                    ]
            if not pending:
                self.context.stop.wait(self.context.settings.poll_wait_seconds / 4)
                continue
            batch = pending[:EVENTS_BATCH_SIZE]
            failed_at = self._deliver(batch)
            if failed_at is None:
                del pending[: len(batch)]
                attempts = 0
                continue
            attempts += 1
            if attempts > EVENTS_RETRY_ATTEMPTS:
                logger.error("events: record %s failed %d times; skipped", failed_at, attempts)
                self.context.stats.failed_deliveries.append({"stream_record": batch[failed_at]})
                del pending[: failed_at + 1]
                attempts = 0
            else:
                del pending[:failed_at]  # what succeeded before it is not sent again
                time.sleep(self.context.settings.async_retry_delay_seconds)

    def _deliver(self, batch: list[dict[str, Any]]) -> int | None:
        """Invoke the function; the index of the first record it failed, or None."""
        result = self.invoke(self.target, {"Records": batch})
        if not result.ok:
            logger.error("events function failed: %s %s", result.error_type, result.error_message)
            return 0
        failed = {
            item["itemIdentifier"] for item in (result.payload or {}).get("batchItemFailures", [])
        }
        for index, record in enumerate(batch):
            if record["dynamodb"]["SequenceNumber"] in failed:
                return index
        return None

    def _lambda_record(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """A stream record as Lambda hands it to a function (creation time in epoch seconds)."""
        change = dict(record["dynamodb"])
        created = change.get("ApproximateCreationDateTime")
        if isinstance(created, datetime):
            change["ApproximateCreationDateTime"] = int(created.timestamp())
        return {
            "eventID": record["eventID"],
            "eventName": record["eventName"],
            "eventVersion": record.get("eventVersion", "1.1"),
            "eventSource": "aws:dynamodb",
            "awsRegion": self.context.resources.region,
            "dynamodb": change,
            "eventSourceARN": self.context.resources.table_stream_arn,
        }
