"""S3 URIs, and reading a job's input object."""

from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from idp.aws.errors import is_not_found
from idp.contract.env.functions import Env
from idp.contract.errors import InputNotFound, InputTooLarge

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


def parse_s3_uri(uri: str) -> tuple[str, str]:
    """`s3://bucket/key` → (bucket, key); ValueError for anything else."""
    if not uri.startswith("s3://"):
        raise ValueError(f"not an S3 URI: {uri!r}")
    bucket, _, key = uri[len("s3://") :].partition("/")
    if not bucket or not key:
        raise ValueError(f"S3 URI needs a bucket and a key: {uri!r}")
    return bucket, key


def s3_uri(bucket: str, key: str) -> str:
    return f"s3://{bucket}/{key}"


def read_input(s3: S3Client, bucket: str, key: str, *, max_bytes: int) -> bytes:
    """The input's bytes, in one GET; InputNotFound / InputTooLarge for what a user can cause.

    The size is checked before the body is read, so a body over the limit is never downloaded.
    """
    try:
        response = s3.get_object(Bucket=bucket, Key=key)
    except ClientError as exc:
        if is_not_found(exc):
            raise InputNotFound(f"input {s3_uri(bucket, key)} does not exist") from None
        raise
    body = response["Body"]
    size = int(response.get("ContentLength", 0))
    if size > max_bytes:
        body.close()
        raise InputTooLarge(
            f"input {s3_uri(bucket, key)} is {size} bytes; the limit is {max_bytes} bytes "
            f"(setting {Env.MAX_INPUT_BYTES.value})"
        )
    data: bytes = body.read()
    return data
