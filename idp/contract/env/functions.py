"""Environment-variable keys every function reads (the zip functions, the processor image and,
for the buckets and limits, the VL container), set by the stack from idp.contract.topology."""

from __future__ import annotations

from enum import StrEnum


class Env(StrEnum):
    """Environment-variable keys read by the functions, the processor and the VL container."""

    JOBS_TABLE = "JOBS_TABLE"
    INPUT_BUCKET = "INPUT_BUCKET"
    RESULTS_BUCKET = "RESULTS_BUCKET"
    MODEL_CACHE_BUCKET = "MODEL_CACHE_BUCKET"
    PROCESSOR_FUNCTION = "PROCESSOR_FUNCTION_NAME"
    CONVERTER_FUNCTION = "CONVERTER_FUNCTION_NAME"  # the Office converter the processor calls
    # How long one Office document's conversion may run before it is stopped (the converter's).
    CONVERSION_TIME_LIMIT = "CONVERSION_TIME_LIMIT_SECONDS"
    VL_ENDPOINT_NAME = "VL_ENDPOINT_NAME"
    VL_VARIANT_NAME = "VL_VARIANT_NAME"
    VL_ENABLED = "VL_ENABLED"
    # Whoever scales the endpoint 0 -> 1 sets this alarm back to OK (see idp/aws/alarms).
    VL_SCALE_IN_ALARM_NAME = "VL_SCALE_IN_ALARM_NAME"
    MAX_PAGES = "MAX_PAGES"
    MAX_INPUT_BYTES = "MAX_INPUT_BYTES"
    CHUNK_PAGES = "CHUNK_PAGES"
    ALLOW_HUB_DOWNLOAD = "ALLOW_HUB_DOWNLOAD"
    PPOCRV6_SIZE = "PPOCRV6_SIZE"  # tiny, small (offline, the default) or medium
    DISPATCH_LEASE_SECONDS = "DISPATCH_LEASE_SECONDS"
    PRODUCER_PREFIXES = (
        "PRODUCER_PREFIXES"  # JSON: principal id → input key prefixes; "" one domain
    )
    RETENTION_DAYS = "RETENTION_DAYS"  # a job record's lifetime (0: kept); see names
    STALE_PROCESSING_SECONDS = "STALE_PROCESSING_SECONDS"
    STALE_QUEUED_SECONDS = "STALE_QUEUED_SECONDS"
    POWERTOOLS_SERVICE_NAME = "POWERTOOLS_SERVICE_NAME"
    POWERTOOLS_METRICS_NAMESPACE = "POWERTOOLS_METRICS_NAMESPACE"
    AWS_ENDPOINT_URL = "AWS_ENDPOINT_URL"
    EVENT_BUS_NAME = "EVENT_BUS_NAME"  # where job-finished events go (idp.contract.events)
