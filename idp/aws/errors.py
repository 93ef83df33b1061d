"""The triage of AWS errors: retryable or not, "not found", and a line to record."""

from __future__ import annotations

from typing import Final

from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    EndpointConnectionError,
    ReadTimeoutError,
)
from botocore.exceptions import (
    ConnectTimeoutError as BotocoreConnectTimeoutError,
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


# What S3 answers for a missing object or bucket (GetObject: NoSuchKey; HeadObject: a bare 404).
NOT_FOUND_CODES: Final = frozenset({"404", "NoSuchKey", "NotFound", "NoSuchBucket"})


def is_not_found(exc: BaseException) -> bool:
    """Whether an S3 call failed because the object or bucket it named does not exist."""
    if not isinstance(exc, ClientError):
        return False
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    return error_code(exc) in NOT_FOUND_CODES or status == 404


def is_missing_object(exc: BaseException) -> bool:
    """Whether an S3 call failed because the object it named does not exist, in a bucket that
    does: a missing bucket is a deployment fault, not an absent object."""
    if not isinstance(exc, ClientError):
        return False
    return is_not_found(exc) and error_code(exc) != "NoSuchBucket"


def is_condition_failure(exc: BaseException) -> bool:
    """A DynamoDB write whose condition did not hold."""
    return isinstance(exc, ClientError) and error_code(exc) == "ConditionalCheckFailedException"


def describe_error(exc: BaseException) -> str:
    """A one-line description for logs and the job record."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        operation = getattr(exc, "operation_name", "call")
        return f"{operation}: {error.get('Code', 'Error')}: {error.get('Message', '')}".strip()
    return f"{type(exc).__name__}: {exc}"
