"""S3 URIs."""

from __future__ import annotations


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
