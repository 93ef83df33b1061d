"""boto3 clients built one way: the retry and timeout settings every component shares."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import boto3
from botocore.config import Config

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

# Standard retry mode already retries throttling a few times inside the client; what still
# fails after that is handed to the caller's own retry (SQS visibility, Lambda async retries).
CLIENT_CONFIG: Final = Config(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=5,
    read_timeout=30,
)

# S3 presigns with SigV4 too (botocore's presigned URLs are SigV2 unless told): a KMS-encrypted
# object refuses SigV2, and SigV4 URLs are scoped to a region and expire within 7 days.
S3_CLIENT_CONFIG: Final = CLIENT_CONFIG.merge(Config(signature_version="s3v4"))


def client(service_name: str, *, config: Config | None = None, **kwargs: Any) -> Any:
    """A boto3 client with `CLIENT_CONFIG` (`S3_CLIENT_CONFIG` for S3), or `config` for a call
    that needs its own (region and endpoint from the environment, as usual)."""
    default = S3_CLIENT_CONFIG if service_name == "s3" else CLIENT_CONFIG
    return boto3.client(service_name, config=config or default, **kwargs)  # type: ignore[call-overload]


def dynamodb_table(table_name: str) -> Table:
    """A DynamoDB table resource with `CLIENT_CONFIG`."""
    return boto3.resource("dynamodb", config=CLIENT_CONFIG).Table(table_name)
