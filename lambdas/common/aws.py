"""AWS client configuration and the triage of AWS errors into retryable and not."""

from __future__ import annotations

from typing import Final

from botocore.config import Config
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    EndpointConnectionError,
    ReadTimeoutError,
)
from botocore.exceptions import (
    ConnectTimeoutError as BotocoreConnectTimeoutError,
)

# Standard retry mode already retries throttling a few times inside the client; what still
# fails after that is handed to the caller's own retry (SQS visibility, Lambda async retries).
CLIENT_CONFIG: Final = Config(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=5,
    read_timeout=30,
)

TRANSIENT_ERROR_CODES: Final = frozenset(
    {
        "ThrottlingException",
        "Throttling",
        "ThrottledException",
        "RequestThrottled",
        "RequestThrottledException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "ProvisionedThroughputExceededException",
        "TransactionConflictException",
        "LimitExceededException",
        "SlowDown",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "ServiceException",
        "InternalError",
        "InternalFailure",
        "InternalServerError",
        "InternalServerException",
        "RequestTimeout",
        "RequestTimeoutException",
        "ResourceNotReadyException",  # Lambda: function still being created / updated
        "ResourceConflictException",  # Lambda: an update is in progress
        "EC2ThrottledException",
    }
)

# SageMaker answers ValidationException while an endpoint is creating or updating.
_BUSY_ENDPOINT_HINTS: Final = (
    "in-progress",
    "in progress",
    "updating",
    "creating",
    "not in service",
)

_TRANSIENT_NETWORK_ERRORS: Final = (
    EndpointConnectionError,
    ConnectionClosedError,
    ReadTimeoutError,
    BotocoreConnectTimeoutError,
)


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def is_endpoint_busy(exc: BaseException) -> bool:
    """A SageMaker ValidationException that only says the endpoint is creating or updating."""
    if not isinstance(exc, ClientError) or error_code(exc) != "ValidationException":
        return False
    message = str(exc.response.get("Error", {}).get("Message", "")).lower()
    return any(hint in message for hint in _BUSY_ENDPOINT_HINTS)


def is_transient(exc: BaseException) -> bool:
    """Whether the same call can succeed later: throttling, 5xx, network, a busy endpoint."""
    if isinstance(exc, _TRANSIENT_NETWORK_ERRORS):
        return True
    if not isinstance(exc, ClientError):
        return False
    if error_code(exc) in TRANSIENT_ERROR_CODES or is_endpoint_busy(exc):
        return True
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    return isinstance(status, int) and status >= 500


def describe_error(exc: BaseException) -> str:
    """A one-line description for logs and the job record."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        operation = getattr(exc, "operation_name", "call")
        return f"{operation}: {error.get('Code', 'Error')}: {error.get('Message', '')}".strip()
    return f"{type(exc).__name__}: {exc}"


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
