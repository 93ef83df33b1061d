"""Single source of truth for names shared by CDK, handlers, processor, VL container and CLI.

Every resource name, environment-variable key, model name, job status and media type that
more than one component needs is defined here and nowhere else.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

PROJECT: Final = "paddle-idp"
STACK_NAME: Final = "PaddleIdpStack"


class JobStatus(StrEnum):
    QUEUED = "QUEUED"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"

    @property
    def is_terminal(self) -> bool:
        return self in (JobStatus.COMPLETED, JobStatus.FAILED)


TERMINAL_STATUSES: Final = (JobStatus.COMPLETED.value, JobStatus.FAILED.value)


class Backend(StrEnum):
    LAMBDA = "lambda"
    SAGEMAKER = "sagemaker"


class TextLayerMode(StrEnum):
    """Where a PDF page's text comes from (job option `text_layer`)."""

    AUTO = "auto"  # the page's text layer when it covers the page (measured rule), else OCR
    OCR = "ocr"  # always OCR
    ONLY = "only"  # never OCR: a page without a usable text layer fails the job


class OcrModel(StrEnum):
    PP_OCRV5 = "PP-OCRv5"
    PP_OCRV6 = "PP-OCRv6"
    PP_STRUCTUREV3 = "PP-StructureV3"
    PADDLEOCR_VL = "PaddleOCR-VL"

    @property
    def backend(self) -> Backend:
        return Backend.SAGEMAKER if self is OcrModel.PADDLEOCR_VL else Backend.LAMBDA

    @property
    def reads_text_lines(self) -> bool:
        """Text detection + recognition only (no layout): PP-OCRv5 and PP-OCRv6."""
        return self in (OcrModel.PP_OCRV5, OcrModel.PP_OCRV6)

    @property
    def yields_markdown(self) -> bool:
        return not self.reads_text_lines

    @classmethod
    def parse(cls, name: str) -> OcrModel:
        """Resolve a user-supplied model name, case-insensitively and through aliases.

        Raises KeyError for an unknown name; callers turn that into UNSUPPORTED_MODEL.
        """
        key = "".join(ch for ch in name.lower() if ch.isalnum())
        return _MODEL_ALIASES[key]


_MODEL_ALIASES: Final[dict[str, OcrModel]] = {
    "ppocrv5": OcrModel.PP_OCRV5,
    "ocrv5": OcrModel.PP_OCRV5,
    "ocr": OcrModel.PP_OCRV5,
    "ppocrv6": OcrModel.PP_OCRV6,
    "ocrv6": OcrModel.PP_OCRV6,
    "ppstructurev3": OcrModel.PP_STRUCTUREV3,
    "structurev3": OcrModel.PP_STRUCTUREV3,
    "structure": OcrModel.PP_STRUCTUREV3,
    "paddleocrvl": OcrModel.PADDLEOCR_VL,
    "ocrvl": OcrModel.PADDLEOCR_VL,
    "vl": OcrModel.PADDLEOCR_VL,
}


class MediaType(StrEnum):
    PDF = "application/pdf"
    PNG = "image/png"
    JPEG = "image/jpeg"
    TIFF = "image/tiff"
    BMP = "image/bmp"
    WEBP = "image/webp"


# Suffixes the S3 -> SQS notification filters on (S3 suffix filters are case-sensitive,
# so both cases are listed). Content is still checked by magic bytes in the processor.
INPUT_SUFFIXES: Final = (".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp")
NOTIFICATION_SUFFIXES: Final = tuple(
    sorted({s for suffix in INPUT_SUFFIXES for s in (suffix, suffix.upper())})
)

# PaddleOCR language codes accepted by the PP-OCRv5 / PP-StructureV3 / VL pipelines.
SUPPORTED_LANGUAGES: Final = frozenset(
    {
        "ch",
        "en",
        "chinese_cht",
        "japan",
        "korean",
        "fr",
        "de",
        "es",
        "it",
        "pt",
        "ru",
        "uk",
        "be",
        "ar",
        "fa",
        "ug",
        "ur",
        "hi",
        "mr",
        "ne",
        "bh",
        "mai",
        "ang",
        "bho",
        "mah",
        "sck",
        "new",
        "gom",
        "sa",
        "bgc",
        "ta",
        "te",
        "ka",
        "kn",
        "th",
        "el",
        "vi",
        "tr",
        "la",
        "af",
        "az",
        "bs",
        "cs",
        "cy",
        "da",
        "et",
        "ga",
        "hr",
        "hu",
        "id",
        "is",
        "ku",
        "lt",
        "lv",
        "mi",
        "ms",
        "mt",
        "nl",
        "no",
        "oc",
        "pi",
        "pl",
        "ro",
        "rs_latin",
        "sk",
        "sl",
        "sq",
        "sv",
        "sw",
        "tl",
        "uz",
        "rs_cyrillic",
        "bg",
        "mn",
        "abq",
        "ady",
        "kbd",
        "ava",
        "dar",
        "inh",
        "che",
        "lbe",
        "lez",
        "tab",
        "kk",
        "ky",
        "tg",
        "mk",
        "tt",
        "cv",
        "ba",
        "mhr",
        "mo",
        "udm",
        "kv",
        "os",
        "bua",
        "xal",
        "tyv",
        "sah",
        "kaa",
        "latin",
        "cyrillic",
        "arabic",
        "devanagari",
        "eslav",
    }
)
DEFAULT_LANGUAGE: Final = "en"

# S3 key layout.
INPUT_PREFIX: Final = "input/"  # input/<model>/<path>
RESULTS_PREFIX: Final = "results/"  # results/<job_id>/result.json (+ result.md, result.pdf)
# Finished results by content (sha256 of the bytes + model + language + options). A job id can
# hold no ".", so this never meets a job's own prefix.
RESULT_CACHE_PREFIX: Final = "results/.cache/"
VL_MANIFEST_PREFIX: Final = "sagemaker/manifests/"
VL_OUTPUT_PREFIX: Final = "sagemaker/output/"
VL_FAILURE_PREFIX: Final = "sagemaker/failure/"
MODEL_CACHE_PREFIX: Final = "models/"  # models/<model_name>.tar.gz
# A large document's intermediates: work/<job_id>/plan.json, chunks/<n>.pdf, parts/<n>.json,
# searchable/<n>.pdf.
# The merge deletes them; a lifecycle rule expires whatever a failed job leaves behind.
WORK_PREFIX: Final = "work/"
WORK_PLAN: Final = "plan.json"  # work/<job_id>/plan.json: what the merge of the chunks needs
WORK_RETENTION_DAYS: Final = 2
RESULT_JSON: Final = "result.json"
RESULT_MD: Final = "result.md"
RESULT_PDF: Final = "result.pdf"  # searchable PDF: the input's pages + invisible text
RESULT_TEXTRACT: Final = "result.textract.json"  # the pages as a DetectDocumentText response
INPUT_LANG_METADATA_KEY: Final = "lang"  # x-amz-meta-lang on an uploaded object

# DynamoDB status table.
JOB_ID_ATTR: Final = "job_id"
STATUS_INDEX: Final = "by-status"
STATUS_INDEX_PK: Final = "status"
STATUS_INDEX_SK: Final = "created_at"

# SageMaker VL endpoint.
VL_VARIANT_NAME: Final = "AllTraffic"
VL_MAX_CONCURRENT_INVOCATIONS: Final = 4
VL_INVOCATION_TIMEOUT_SECONDS: Final = 3600
# The container gives up on a request this long before SageMaker's own invocation timeout, so
# its 504 (with a reason) is what ends the job, not SageMaker's bare timeout.
VL_REQUEST_TIMEOUT_SECONDS: Final = VL_INVOCATION_TIMEOUT_SECONDS - 120
VL_INSTANCE_TYPE: Final = "ml.g5.xlarge"
VL_CONTAINER_STARTUP_TIMEOUT_SECONDS: Final = 1200
# PaddleOCR-VL pipeline versions → (layout model, vision-language model) they load.
VL_PIPELINE_MODELS: Final[dict[str, tuple[str, str]]] = {
    "v1": ("PP-DocLayoutV2", "PaddleOCR-VL-0.9B"),
    "v1.5": ("PP-DocLayoutV3", "PaddleOCR-VL-1.5-0.9B"),
    "v1.6": ("PP-DocLayoutV3", "PaddleOCR-VL-1.6-0.9B"),
}
VL_DEFAULT_PIPELINE_VERSION: Final = "v1.6"
SCALE_IN_BACKLOG_THRESHOLD: Final = 0.1
SCALE_IN_EVALUATION_PERIODS: Final = 10
SCALE_IN_PERIOD_SECONDS: Final = 60

# Lambda sizes (SPEC "Components and sizes").
INVOKER_MEMORY_MB: Final = 256
INVOKER_TIMEOUT_SECONDS: Final = 60
PROCESSOR_MEMORY_MB: Final = 4096
# /tmp of the processor: its model cache between warm invocations (context key to change it).
DEFAULT_PROCESSOR_EPHEMERAL_STORAGE_MIB: Final = 6144
PROCESSOR_TIMEOUT_SECONDS: Final = 900
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
    PROCESSOR_ASYNC_MAX_EVENT_AGE_SECONDS + VL_INVOCATION_TIMEOUT_SECONDS + 3600
)


class Env(StrEnum):
    """Environment-variable keys read by the functions, the processor and the VL container."""

    JOBS_TABLE = "JOBS_TABLE"
    INPUT_BUCKET = "INPUT_BUCKET"
    RESULTS_BUCKET = "RESULTS_BUCKET"
    MODEL_CACHE_BUCKET = "MODEL_CACHE_BUCKET"
    PROCESSOR_FUNCTION = "PROCESSOR_FUNCTION_NAME"
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
    STALE_PROCESSING_SECONDS = "STALE_PROCESSING_SECONDS"
    STALE_QUEUED_SECONDS = "STALE_QUEUED_SECONDS"
    POWERTOOLS_SERVICE_NAME = "POWERTOOLS_SERVICE_NAME"
    POWERTOOLS_METRICS_NAMESPACE = "POWERTOOLS_METRICS_NAMESPACE"
    AWS_ENDPOINT_URL = "AWS_ENDPOINT_URL"
    EVENT_BUS_NAME = "EVENT_BUS_NAME"  # where job-finished events go (idp.contract.events)


METRICS_NAMESPACE: Final = "PaddleIdp"


class Service(StrEnum):
    """Powertools service names, one per function (also the local runtime's component names)."""

    INVOKER = "invoker"
    PROCESSOR = "ocr-processor"
    COMPLETION = "completion-handler"
    SCALE_IN = "scale-in"
    SWEEPER = "stale-job-sweeper"
    EVENTS = "job-events"
    VL_ENDPOINT = "vl-endpoint"


# Document limits (overridable through Env.MAX_PAGES / Env.MAX_INPUT_BYTES): Textract's
# asynchronous API takes 3,000 pages and 500 MB.
DEFAULT_MAX_PAGES: Final = 3000
DEFAULT_MAX_INPUT_BYTES: Final = 500 * 1024 * 1024
# A document with more pages than this is split into chunks of this many pages, each OCR'd by
# its own processor invocation in parallel (Env.CHUNK_PAGES; 0 turns chunking off).
DEFAULT_CHUNK_PAGES: Final = 10
DEFAULT_PPOCRV6_SIZE: Final = "small"  # the size whose weights ship offline (and in the image)
# Pages one VL async invocation may take (a whole short document, or one chunk of a long one),
# so that it stays well inside VL_INVOCATION_TIMEOUT_SECONDS.
VL_MAX_PAGES: Final = 200
MAX_IMAGE_PIXELS: Final = 80_000_000  # decoded pixels per page; beyond this is a bomb
DEFAULT_PDF_SCALE: Final = 2.0  # 144 dpi


# Stack outputs a user (and the idp CLI) reads.
class Output(StrEnum):
    INPUT_BUCKET = "InputBucketName"
    RESULTS_BUCKET = "ResultsBucketName"
    MODEL_CACHE_BUCKET = "ModelCacheBucketName"
    JOBS_TABLE = "JobsTableName"
    JOB_QUEUE_URL = "JobQueueUrl"
    DLQ_URL = "DeadLetterQueueUrl"
    PROCESSOR_FUNCTION = "ProcessorFunctionName"
    VL_ENDPOINT = "VlEndpointName"
    EVENT_BUS = "EventBusName"


class VlEnv(StrEnum):
    """Environment-variable keys read by the VL inference container (sagemaker_container)."""

    ENGINE = "VL_ENGINE"  # paddleocr-vl | substitute-ppocrv5
    HOST = "VL_HOST"
    PORT = "VL_PORT"  # SageMaker requires 8080; tests pick a free port
    MAX_CONCURRENT_REQUESTS = "VL_MAX_CONCURRENT_REQUESTS"
    REQUEST_TIMEOUT_SECONDS = "VL_REQUEST_TIMEOUT_SECONDS"
    ENGINE_INSTANCES = "VL_ENGINE_INSTANCES"
    MODELS_DIR = "VL_MODELS_DIR"  # weights baked into the image
    PIPELINE_VERSION = "VL_PIPELINE_VERSION"
    REGION_CONCURRENCY = "VL_REGION_CONCURRENCY"  # VLM requests in flight per pipeline
    PAGE_BATCH = "VL_PAGE_BATCH"  # pages of a document handed to the VL pipeline together
    DEVICE = "VL_DEVICE"
    SERVER_URL = "VL_SERVER_URL"  # use an external OpenAI-compatible VLM server, supervise none
    SERVER_COMMAND = "VL_SERVER_COMMAND"
    SERVER_PORT = "VL_SERVER_PORT"
    SERVER_GPU_MEMORY_UTILIZATION = "VL_SERVER_GPU_MEMORY_UTILIZATION"
    SERVER_MAX_NUM_SEQS = "VL_SERVER_MAX_NUM_SEQS"
    SERVER_EXTRA_ARGS = "VL_SERVER_EXTRA_ARGS"
    SERVER_STARTUP_TIMEOUT_SECONDS = "VL_SERVER_STARTUP_TIMEOUT_SECONDS"
    SERVER_MAX_RESTARTS = "VL_SERVER_MAX_RESTARTS"
    WARMUP = "VL_WARMUP"


VL_CONTAINER_PORT: Final = 8080  # SageMaker's serving contract
VL_ENGINE_PADDLEOCR_VL: Final = "paddleocr-vl"
VL_ENGINE_SUBSTITUTE_PPOCRV5: Final = "substitute-ppocrv5"


class Metric(StrEnum):
    """Powertools metrics (namespace METRICS_NAMESPACE) emitted by the functions and plotted."""

    JOBS_ROUTED = "JobsRouted"
    JOBS_FAILED = "JobsFailed"
    JOBS_COMPLETED = "JobsCompleted"
    DISPATCH_RETRIES = "DispatchRetries"
    DUPLICATE_DELIVERIES = "DuplicateDeliveries"
    ENDPOINT_SCALE_OUT = "EndpointScaleOut"
    ENDPOINT_SCALE_IN = "EndpointScaleIn"
    IGNORED_NOTIFICATIONS = "IgnoredNotifications"


class ProcessorEnv(StrEnum):
    """Extra environment-variable keys read by the OCR processor (ocr_processor_image)."""

    MODELS_DIR = "IDP_MODELS_DIR"  # unpacked model dirs baked into the image (or .models locally)
    CPU_THREADS = "OCR_CPU_THREADS"  # paddle inference threads; default 2
