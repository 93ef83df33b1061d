"""The embedded emulator writes a DynamoDB item whole, as DynamoDB does.

The job store relies on it: a job is recorded COMPLETED with its result URIs in one UpdateItem,
and a chunked job's merge is won by one conditional write. moto's server applies an update
expression one action at a time on a thread per request; these tests make the interpreter switch
threads often, so that a torn read or a doubled conditional write would show.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest
from botocore.exceptions import ClientError

from devkit.local.emulator import AwsEndpoint, EmbeddedAws

TABLE = "items"
FIELDS = [f"field_{number}" for number in range(40)]
WRITES = 100


@pytest.fixture
def endpoint() -> Iterator[AwsEndpoint]:
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # a thread switch between any two of moto's steps
    try:
        with EmbeddedAws() as aws:
            aws.endpoint.client("dynamodb").create_table(
                TableName=TABLE,
                KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                BillingMode="PAY_PER_REQUEST",
            )
            yield aws.endpoint
    finally:
        sys.setswitchinterval(interval)


def test_a_read_sees_all_of_an_update_or_none_of_it(endpoint: AwsEndpoint) -> None:
    # GIVEN an item whose 40 fields one thread keeps setting to the same new value
    writer_client, reader_client = endpoint.client("dynamodb"), endpoint.client("dynamodb")
    key = {"id": {"S": "job"}}
    writer_client.put_item(TableName=TABLE, Item=key)
    expression = "SET " + ", ".join(f"{field} = :value" for field in FIELDS)

    def write() -> None:
        for value in range(WRITES):
            writer_client.update_item(
                TableName=TABLE,
                Key=key,
                UpdateExpression=expression,
                ExpressionAttributeValues={":value": {"N": str(value)}},
            )

    # WHEN another thread reads the item while the updates go on
    writer = threading.Thread(target=write)
    writer.start()
    seen: list[set[str]] = []
    while writer.is_alive():
        item = reader_client.get_item(TableName=TABLE, Key=key, ConsistentRead=True)["Item"]
        seen.append({item[field]["N"] if field in item else "-" for field in FIELDS})
    writer.join()

    # THEN every read saw one value in all 40 fields (or none yet)
    assert len(seen) > 10
    assert [values for values in seen if len(values) != 1] == []


def test_a_conditional_write_is_won_once(endpoint: AwsEndpoint) -> None:
    # GIVEN eight threads that each try to claim the same items, each claim conditional
    key_count, thread_count = 30, 8
    won: list[tuple[int, int]] = []
    refused: list[str] = []

    def claim(me: int) -> None:
        client = endpoint.client("dynamodb")
        for number in range(key_count):
            try:
                client.update_item(
                    TableName=TABLE,
                    Key={"id": {"S": f"merge-{number}"}},
                    UpdateExpression="SET winner = :me",
                    ConditionExpression="attribute_not_exists(winner)",
                    ExpressionAttributeValues={":me": {"N": str(me)}},
                )
            except ClientError as error:
                refused.append(error.response["Error"]["Code"])
            else:
                won.append((number, me))

    # WHEN they run at once
    threads = [threading.Thread(target=claim, args=(me,)) for me in range(thread_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    # THEN each item was claimed by exactly one thread, the one its record names
    client = endpoint.client("dynamodb")
    assert set(refused) == {"ConditionalCheckFailedException"}
    assert sorted(number for number, _ in won) == list(range(key_count))
    for number, me in won:
        item = client.get_item(TableName=TABLE, Key={"id": {"S": f"merge-{number}"}})["Item"]
        assert item["winner"] == {"N": str(me)}
