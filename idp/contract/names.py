"""Names shared by CDK, handlers, processor, VL container and CLI: the job's models, statuses and
media types, the S3 key layout, the table's keys, the endpoint's settings, stack outputs and
metrics. Each is defined once; the rest of the contract is split by concern: languages
(idp.contract.languages), the functions' sizes and wiring (idp.contract.topology), and the
environment-variable keys each deployable reads (idp.contract.env).
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
    HEIF = "image/heif"  # HEIC photos (phones save these by default) and other HEIF images
    AVIF = "image/avif"
    # Office documents: converted to PDF by the converter function (idp.document.office).
    DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    DOC = "application/msword"
    ODT = "application/vnd.oasis.opendocument.text"
    RTF = "application/rtf"
    PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
    PPT = "application/vnd.ms-powerpoint"
    ODP = "application/vnd.oasis.opendocument.presentation"
    XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    XLS = "application/vnd.ms-excel"
    ODS = "application/vnd.oasis.opendocument.spreadsheet"

    @property
    def is_office(self) -> bool:
        """An Office document: its pages are its conversion to PDF."""
        return self in OFFICE_FORMATS

    @property
    def is_spreadsheet(self) -> bool:
        """A spreadsheet: its cells are read as tables, each sheet a page."""
        return self in (MediaType.XLSX, MediaType.XLS, MediaType.ODS)

    @property
    def label(self) -> str:
        """What a person calls the format: "DOCX", "PDF", "HEIC/HEIF"."""
        return _MEDIA_LABELS.get(self, self.name)


_MEDIA_LABELS: Final = {MediaType.HEIF: "HEIC/HEIF", MediaType.JPEG: "JPEG"}
# Office formats by their usual file suffix (the converter names its input file by it).
OFFICE_FORMATS: Final[dict[MediaType, str]] = {
    MediaType.DOCX: ".docx",
    MediaType.DOC: ".doc",
    MediaType.ODT: ".odt",
    MediaType.RTF: ".rtf",
    MediaType.PPTX: ".pptx",
    MediaType.PPT: ".ppt",
    MediaType.ODP: ".odp",
    MediaType.XLSX: ".xlsx",
    MediaType.XLS: ".xls",
    MediaType.ODS: ".ods",
}


# Suffixes the S3 -> SQS notification filters on (S3 suffix filters are case-sensitive,
# so both cases are listed). Content is still checked by magic bytes in the processor.
INPUT_SUFFIXES: Final = (
    ".pdf",
    ".png",
    ".jpg",
    ".jpeg",
    ".tif",
    ".tiff",
    ".bmp",
    ".webp",
    ".heic",
    ".heif",
    ".avif",
    *OFFICE_FORMATS.values(),
)
NOTIFICATION_SUFFIXES: Final = tuple(
    sorted({s for suffix in INPUT_SUFFIXES for s in (suffix, suffix.upper())})
)


# S3 key layout.
INPUT_PREFIX: Final = "input/"  # input/<model>/<path>
RESULTS_PREFIX: Final = "results/"  # results/<owner>/<job_id>/result.json (+ .md, .pdf, …)
# Finished results by content (sha256 of the bytes + model + language + options). An owner's
# slice never starts with ".", so this never meets a job's own prefix.
RESULT_CACHE_PREFIX: Final = "results/.cache/"
VL_MANIFEST_PREFIX: Final = "sagemaker/manifests/"
VL_OUTPUT_PREFIX: Final = "sagemaker/output/"
VL_FAILURE_PREFIX: Final = "sagemaker/failure/"
MODEL_CACHE_PREFIX: Final = "models/"  # models/<model_name>.tar.gz
# A large document's intermediates: work/<job_id>/plan.json, chunks/<n>.pdf, parts/<n>.json,
# searchable/<n>.pdf; an Office document's conversion: work/<job_id>/converted/document.pdf and,
# for a spreadsheet, converted/sheets.json.
# The merge deletes them; a lifecycle rule expires whatever a failed job leaves behind.
WORK_PREFIX: Final = "work/"
WORK_PLAN: Final = "plan.json"  # work/<job_id>/plan.json: what the merge of the chunks needs
WORK_RETENTION_DAYS: Final = 2
# Inputs, results (the result cache among them) and job records expire this many days after
# they were written (the stack's `retentionDays`; 0 keeps them). Records carry the moment as
# EXPIRES_AT_ATTR, the status table's TTL attribute (epoch seconds).
DEFAULT_RETENTION_DAYS: Final = 30
EXPIRES_AT_ATTR: Final = "expires_at"
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
SCALE_IN_BACKLOG_THRESHOLD: Final = 0.1
SCALE_IN_EVALUATION_PERIODS: Final = 10
SCALE_IN_PERIOD_SECONDS: Final = 60


METRICS_NAMESPACE: Final = "PaddleIdp"


class Service(StrEnum):
    """Powertools service names, one per function (also the local runtime's component names)."""

    INVOKER = "invoker"
    PROCESSOR = "ocr-processor"
    COMPLETION = "completion-handler"
    SCALE_IN = "scale-in"
    SWEEPER = "stale-job-sweeper"
    EVENTS = "job-events"
    CONVERTER = "office-converter"
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
    DATA_KEY_ARN = "DataKeyArn"  # the KMS key the queues and buckets are encrypted with


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
