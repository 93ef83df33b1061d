"""The status table as the stack deploys it, its value codec, and the conditional writes that
every change to a job record goes through (`JobTable`, the base of
`idp.jobstore.store.JobStore`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

from boto3.dynamodb.conditions import Attr
from botocore.exceptions import ClientError

from idp.aws.errors import is_condition_failure
from idp.contract import names
from idp.contract.names import JobStatus
from idp.contract.timestamps import iso

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

Clock = Callable[[], datetime]  # an aware UTC datetime: now, or a test's time

# A job that has not ended: QUEUED or PROCESSING.
WHILE_ACTIVE: Final = "#s IN (:queued, :processing)"
_STATUS_VALUES: Final = {
    ":queued": JobStatus.QUEUED.value,
    ":processing": JobStatus.PROCESSING.value,
}
_PLACEHOLDER: Final = re.compile(r"[:#]\w+")


def system_clock() -> datetime:
    return datetime.now(UTC)


def to_dynamo(value: Any) -> Any:
    """DynamoDB takes no floats: turn them (recursively) into Decimals."""
    if isinstance(value, float):
        return Decimal(str(round(value, 3)))
    if isinstance(value, Mapping):
        return {k: to_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_dynamo(v) for v in value]
    return value


def from_dynamo(value: Any) -> Any:
    """Decimals back to int/float so records serialize as plain JSON."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, Mapping):
        return {k: from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_dynamo(v) for v in value]
    if isinstance(value, set | frozenset):  # a number set (chunks_committed)
        return sorted(from_dynamo(v) for v in value)
    return value


def jobs_table_definition(table_name: str) -> dict[str, Any]:
    """`create_table` arguments for the status table as the stack deploys it (emulator, tests)."""
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": names.JOB_ID_ATTR, "AttributeType": "S"},
            {"AttributeName": names.STATUS_INDEX_PK, "AttributeType": "S"},
            {"AttributeName": names.STATUS_INDEX_SK, "AttributeType": "S"},
        ],
        "KeySchema": [{"AttributeName": names.JOB_ID_ATTR, "KeyType": "HASH"}],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": names.STATUS_INDEX,
                "KeySchema": [
                    {"AttributeName": names.STATUS_INDEX_PK, "KeyType": "HASH"},
                    {"AttributeName": names.STATUS_INDEX_SK, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        # The outbox of job-finished events (lambdas/events).
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    }


class JobTable:
    """Conditional writes on job records. Takes its DynamoDB Table and a clock (default: now),
    which dates every timestamp and lease it writes; creates no clients."""

    def __init__(self, table: Table, *, clock: Clock = system_clock) -> None:
        self._table = table
        self._clock = clock

    def _now(self) -> str:
        return iso(self._clock())

    def _lease(self, seconds: float) -> dict[str, str]:
        """`:now` and `:until` (`seconds` later): the values of a lease taken now."""
        now = self._clock()
        return {":now": iso(now), ":until": iso(now + timedelta(seconds=seconds))}

    def _put_new(self, item: Mapping[str, Any]) -> bool:
        """Write a record unless its job exists. False when it does (a redelivery)."""
        try:
            self._table.put_item(
                Item=to_dynamo(dict(item)),
                ConditionExpression=Attr(names.JOB_ID_ATTR).not_exists(),
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True

    def _update(
        self, job_id: str, expression: str, values: Mapping[str, Any], **options: Any
    ) -> bool:
        """Update an existing job if the condition in `options` holds; False when it does not."""
        return self._updated_record(job_id, expression, values, **options) is not None

    def _updated_record(
        self,
        job_id: str,
        expression: str,
        values: Mapping[str, Any],
        *,
        condition: str,
        fields: Mapping[str, Any] | None = None,
        extra_names: Mapping[str, str] | None = None,
        return_record: bool = False,
    ) -> dict[str, Any] | None:
        """Update an existing job if `condition` holds: None when it does not, else the record
        after the write when `return_record` (an empty dict otherwise).

        `fields` are set as well, appended to the expression's SET clause (which must come
        last). Placeholders the expression uses but `values` does not give are filled in:
        `:now` with the clock's time, `:queued` and `:processing` with those statuses.
        """
        fields = fields or {}
        expression += "".join(f", #{k} = :{k}" for k in fields)
        used = set(_PLACEHOLDER.findall(f"{expression} {condition}"))
        attr_names = {"#s": "status", **(extra_names or {}), **{f"#{k}": k for k in fields}}
        filled = {key: value for key, value in _STATUS_VALUES.items() if key in used}
        if ":now" in used and ":now" not in values:
            filled[":now"] = self._now()
        all_values = {**filled, **values, **{f":{k}": v for k, v in fields.items()}}
        try:
            response = self._table.update_item(
                Key={names.JOB_ID_ATTR: job_id},
                UpdateExpression=expression,
                ConditionExpression=f"attribute_exists({names.JOB_ID_ATTR}) AND ({condition})",
                ExpressionAttributeNames={k: v for k, v in attr_names.items() if k in used},
                ExpressionAttributeValues=to_dynamo(all_values),
                ReturnValues="ALL_NEW" if return_record else "NONE",
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return None
            raise
        return dict(from_dynamo(response.get("Attributes", {})))
