"""How the pipeline's functions and topics are wired: read by the CDK stack and the local runtime.

The stack and the local runtime both build from these specs, so the local run cannot drift from
the deployed infrastructure (tests compare the synthesized template against them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from idp.contract import names
from idp.contract.env.functions import Env
from idp.contract.names import Service

# Lambda sizes (SPEC "Components and sizes").
INVOKER_MEMORY_MB: Final = 256
INVOKER_TIMEOUT_SECONDS: Final = 60
PROCESSOR_MEMORY_MB: Final = 4096
# /tmp of the processor: its model cache between warm invocations (context key to change it).
DEFAULT_PROCESSOR_EPHEMERAL_STORAGE_MIB: Final = 6144
PROCESSOR_TIMEOUT_SECONDS: Final = 900
# Lambda's default /tmp, and the most a function may have.
DEFAULT_EPHEMERAL_STORAGE_MIB: Final = 512
MAX_EPHEMERAL_STORAGE_MIB: Final = 10240
# Room in the converter's /tmp for LibreOffice's profile and scratch files beside a document.
CONVERTER_SCRATCH_MIB: Final = 256
# PP-StructureV3 pages are read in chunks of at most this many. Measured in the processor image
# (docs/benchmarks.md, "PP-StructureV3 in the processor image"): 3.8 s a page median, 7.6 s the
# slowest, 3.8 s cold start, peak RSS 2.1 GB: ten of the slowest pages take ~80 s, a tenth of
# PROCESSOR_TIMEOUT_SECONDS, and PROCESSOR_MEMORY_MB leaves ~2 GB beside them.
STRUCTURE_CHUNK_PAGES: Final = 10
# The Office converter (LibreOffice): measured in its image (docs/benchmarks.md, "Office
# documents"); the time limit stops a conversion well before the function's own timeout, so the
# job ends CONVERSION_TIMEOUT with its reason rather than a Lambda timeout.
CONVERTER_MEMORY_MB: Final = 2048
CONVERTER_TIMEOUT_SECONDS: Final = 180
CONVERSION_TIME_LIMIT_SECONDS: Final = 120
COMPLETION_MEMORY_MB: Final = 256
COMPLETION_TIMEOUT_SECONDS: Final = 300
SCALE_IN_MEMORY_MB: Final = 128
SCALE_IN_TIMEOUT_SECONDS: Final = 30
SWEEPER_MEMORY_MB: Final = 256
SWEEPER_TIMEOUT_SECONDS: Final = 120
# The events function: a batch of status-table stream records → job-finished events.
EVENTS_MEMORY_MB: Final = 256
EVENTS_TIMEOUT_SECONDS: Final = 60
EVENTS_BATCH_SIZE: Final = 25
EVENTS_RETRY_ATTEMPTS: Final = 10  # a record that still fails then goes to the failure queue
SWEEPER_SCHEDULE_MINUTES: Final = 15
QUEUE_MAX_RECEIVE_COUNT: Final = 4
QUEUE_VISIBILITY_TIMEOUT_SECONDS: Final = 6 * INVOKER_TIMEOUT_SECONDS
# An invoker's claim to dispatch a job expires before the message can be seen again, so a
# redelivery after an invoker crash can take the job over instead of dropping it.
DISPATCH_LEASE_SECONDS: Final = QUEUE_VISIBILITY_TIMEOUT_SECONDS // 3
PROCESSOR_ASYNC_RETRY_ATTEMPTS: Final = 2
PROCESSOR_ASYNC_MAX_EVENT_AGE_SECONDS: Final = 6 * 3600
# A job untouched for longer than this is stale: no worker can still be on it. PROCESSING:
# every async attempt at its full timeout, plus Lambda's retry back-off and a margin. QUEUED:
# the longest a dispatched job can wait (the async event age, or an endpoint request's TTL plus
# its invocation timeout), plus a margin.
STALE_PROCESSING_SECONDS: Final = (
    1 + PROCESSOR_ASYNC_RETRY_ATTEMPTS
) * PROCESSOR_TIMEOUT_SECONDS + 3600
STALE_QUEUED_SECONDS: Final = (
    PROCESSOR_ASYNC_MAX_EVENT_AGE_SECONDS + names.VL_INVOCATION_TIMEOUT_SECONDS + 3600
)


def converter_ephemeral_storage_mib(max_input_bytes: int) -> int:
    """The converter's /tmp: a document of the largest size allowed, its PDF at up to twice
    that, and LibreOffice's scratch (a larger PDF fails its conversion, CONVERSION_FAILED)."""
    needed = math.ceil(3 * max_input_bytes / 2**20) + CONVERTER_SCRATCH_MIB
    return min(MAX_EPHEMERAL_STORAGE_MIB, max(DEFAULT_EPHEMERAL_STORAGE_MIB, needed))


class Topic(StrEnum):
    """SNS topics of the stack (the value is the construct id and the local topic suffix)."""

    SUCCESS = "VlSuccessTopic"
    ERROR = "ErrorTopic"
    SCALE_IN = "ScaleInTopic"


class Function(StrEnum):
    INVOKER = "Invoker"
    PROCESSOR = "OcrProcessor"
    COMPLETION = "CompletionHandler"
    SCALE_IN = "ScaleInHandler"
    SWEEPER = "StaleJobSweeper"
    EVENTS = "JobEventsPublisher"
    CONVERTER = "OfficeConverter"


@dataclass(frozen=True)
class FunctionSpec:
    handler: str  # module path + function, as Lambda's Handler / the image CMD
    service: Service
    memory_mb: int
    timeout_seconds: int
    env: tuple[Env, ...]  # environment variables the function reads
    topics: tuple[Topic, ...] = ()  # SNS topics the function is subscribed to
    schedule_minutes: int | None = None  # run on a schedule (EventBridge rule)
    table_stream: bool = False  # fed by the status table's stream (an event source mapping)


# Powertools' service name and metrics namespace, which every function reads; and what every
# function that works on a job reads: the status table, the input and results buckets.
_POWERTOOLS_ENV: Final = (Env.POWERTOOLS_SERVICE_NAME, Env.POWERTOOLS_METRICS_NAMESPACE)
_JOB_ENV: Final = (Env.JOBS_TABLE, Env.INPUT_BUCKET, Env.RESULTS_BUCKET, *_POWERTOOLS_ENV)

FUNCTIONS: Final[dict[Function, FunctionSpec]] = {
    Function.INVOKER: FunctionSpec(
        handler="lambdas.invoker.handler.lambda_handler",
        service=Service.INVOKER,
        memory_mb=INVOKER_MEMORY_MB,
        timeout_seconds=INVOKER_TIMEOUT_SECONDS,
        env=(
            # No results bucket: the invoker never reads a document nor writes a result.
            Env.JOBS_TABLE,
            Env.INPUT_BUCKET,
            *_POWERTOOLS_ENV,
            Env.PROCESSOR_FUNCTION,
            Env.VL_ENABLED,
            Env.VL_ENDPOINT_NAME,
            Env.VL_VARIANT_NAME,
            Env.VL_SCALE_IN_ALARM_NAME,
            Env.MAX_INPUT_BYTES,
            Env.DISPATCH_LEASE_SECONDS,
            Env.RETENTION_DAYS,
            Env.PRODUCER_PREFIXES,
        ),
    ),
    Function.PROCESSOR: FunctionSpec(
        handler="ocr_processor_image.handler.lambda_handler",
        service=Service.PROCESSOR,
        memory_mb=PROCESSOR_MEMORY_MB,
        timeout_seconds=PROCESSOR_TIMEOUT_SECONDS,
        env=(
            *_JOB_ENV,
            Env.MODEL_CACHE_BUCKET,
            Env.MAX_PAGES,
            Env.MAX_INPUT_BYTES,
            Env.CHUNK_PAGES,
            Env.ALLOW_HUB_DOWNLOAD,
            Env.PPOCRV6_SIZE,
            Env.VL_ENDPOINT_NAME,
            Env.CONVERTER_FUNCTION,
        ),
    ),
    Function.CONVERTER: FunctionSpec(
        handler="office_converter_image.handler.lambda_handler",
        service=Service.CONVERTER,
        memory_mb=CONVERTER_MEMORY_MB,
        timeout_seconds=CONVERTER_TIMEOUT_SECONDS,
        # No bucket, table or cache: its event's presigned URLs are all it reaches.
        env=(
            Env.MAX_INPUT_BYTES,
            Env.CONVERSION_TIME_LIMIT,
            *_POWERTOOLS_ENV,
        ),
    ),
    Function.COMPLETION: FunctionSpec(
        handler="lambdas.completion.handler.lambda_handler",
        service=Service.COMPLETION,
        memory_mb=COMPLETION_MEMORY_MB,
        timeout_seconds=COMPLETION_TIMEOUT_SECONDS,
        env=(*_JOB_ENV, Env.PROCESSOR_FUNCTION),
        topics=(Topic.SUCCESS, Topic.ERROR),
    ),
    Function.SCALE_IN: FunctionSpec(
        handler="lambdas.scale_in.handler.lambda_handler",
        service=Service.SCALE_IN,
        memory_mb=SCALE_IN_MEMORY_MB,
        timeout_seconds=SCALE_IN_TIMEOUT_SECONDS,
        env=(Env.VL_ENDPOINT_NAME, Env.VL_VARIANT_NAME, *_POWERTOOLS_ENV),
        topics=(Topic.SCALE_IN,),
    ),
    Function.SWEEPER: FunctionSpec(
        handler="lambdas.sweeper.handler.lambda_handler",
        service=Service.SWEEPER,
        memory_mb=SWEEPER_MEMORY_MB,
        timeout_seconds=SWEEPER_TIMEOUT_SECONDS,
        env=(
            Env.JOBS_TABLE,
            Env.STALE_PROCESSING_SECONDS,
            Env.STALE_QUEUED_SECONDS,
            *_POWERTOOLS_ENV,
        ),
        schedule_minutes=SWEEPER_SCHEDULE_MINUTES,
    ),
    Function.EVENTS: FunctionSpec(
        handler="lambdas.events.handler.lambda_handler",
        service=Service.EVENTS,
        memory_mb=EVENTS_MEMORY_MB,
        timeout_seconds=EVENTS_TIMEOUT_SECONDS,
        env=(Env.EVENT_BUS_NAME, *_POWERTOOLS_ENV),
        table_stream=True,
    ),
}

# The processor's async-invoke failures go to this topic as Lambda destination records.
PROCESSOR_ON_FAILURE_TOPIC: Final = Topic.ERROR
SCALE_IN_ALARM_NAME_SUFFIX: Final = "vl-backlog-idle"


def scale_in_alarm_name(prefix: str) -> str:
    """The VL endpoint's idle alarm, named after its stack (or the local run's prefix)."""
    return f"{prefix}-{SCALE_IN_ALARM_NAME_SUFFIX}"
