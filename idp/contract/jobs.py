"""Jobs as every unit sees them: the job message, its options and identity, and the job a worker
is handed (`DispatchedJob`, with its page range when it is one chunk of a large document).

How a job message is read from SQS (S3 events and direct messages) is idp.flow.inbound.job_queue.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from idp.contract import names
from idp.contract.errors import InvalidMessage, JobError, UnsupportedLanguage, UnsupportedModel
from idp.contract.languages import SUPPORTED_LANGUAGES
from idp.contract.names import OcrModel, TextLayerMode

# SageMaker's InferenceId takes at most 64 printable characters; the job id doubles as it.
JOB_ID_PATTERN: Final = r"^[A-Za-z0-9_-]{1,64}$"


def parse_model(value: object) -> OcrModel:
    """A model named by a user or a message, through its aliases; UnsupportedModel otherwise."""
    if isinstance(value, OcrModel):
        return value
    try:
        return OcrModel.parse(str(value))
    except KeyError:
        known = ", ".join(m.value for m in OcrModel)
        raise UnsupportedModel(f"unknown OCR model {value!r}; use one of: {known}") from None


Origin = Literal["s3-event", "message"]


class JobOptions(BaseModel):
    """Per-job engine options; part of the job identity and of the result cache key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # The base scale of a PDF page's rendering (pixels per point): vector pages are rendered
    # at it, scans at their own resolution but never below it (idp.document.render_scale);
    # PageResult.render records each page's.
    pdf_scale: float = Field(default=names.DEFAULT_PDF_SCALE, gt=0, le=6)
    # Read each page upright (0/90/180/270°, idp.document.ocr.steps.orientation) on the CPU models;
    # PaddleOCR-VL reads pages as given and ignores it.
    use_doc_orientation_classify: bool = True
    use_doc_unwarping: bool = False
    use_textline_orientation: bool = False
    # result.pdf beside result.json: the input's pages with the recognized text invisibly on top.
    searchable_pdf: bool = True
    # result.textract.json beside result.json: the pages as a Textract DetectDocumentText response.
    textract_json: bool = True
    text_layer: TextLayerMode = TextLayerMode.AUTO
    # The text-line model a layout model (PP-StructureV3) reads its regions' text with; None:
    # the stack's default (EngineSettings.structure_text_model).
    text_model: OcrModel | None = None

    _text_model = field_validator("text_model", mode="before")(
        lambda value: None if value is None else parse_model(value)
    )

    @field_validator("text_model")
    @classmethod
    def _reads_text_lines(cls, value: OcrModel | None) -> OcrModel | None:
        if value is not None and not value.reads_text_lines:
            raise ValueError(
                f"text_model reads a page's text lines: {OcrModel.PP_OCRV5.value} or "
                f"{OcrModel.PP_OCRV6.value}, not {value.value}"
            )
        return value

    def canonical(self) -> str:
        # Options left unset (None) stay out, so adding one never changes an existing job's id.
        fields = self.model_dump(mode="json", exclude_none=True)
        return json.dumps(fields, sort_keys=True, separators=(",", ":"))


class JobRequest(BaseModel):
    """One unit of work: an object in S3 to OCR with a model and a language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bucket: str = Field(min_length=3)
    key: str = Field(min_length=1)
    model: OcrModel
    lang: str | None = None  # None: take it from the object's metadata, else the default
    job_id: str | None = Field(default=None, pattern=JOB_ID_PATTERN)
    options: JobOptions = Field(default_factory=JobOptions)
    object_version: str | None = None  # versionId / sequencer / ETag from the event, if any
    origin: Origin = "message"
    # Who sent it (the message's SenderId, the uploader's principalId): never the message's say,
    # so not in the message's schema.
    owner: SkipJsonSchema[str | None] = None

    _model = field_validator("model", mode="before")(parse_model)

    @model_validator(mode="after")
    def _text_model_only_for_layout_models(self) -> JobRequest:
        if self.options.text_model is not None and self.model.reads_text_lines:
            raise InvalidMessage(
                f"text_model picks the text-line model of a layout model "
                f"({OcrModel.PP_STRUCTUREV3.value}); a {self.model.value} job reads with "
                f"{self.model.value} itself"
            )
        return self

    @model_validator(mode="after")
    def _text_layer_only_for_text_lines(self) -> JobRequest:
        if self.options.text_layer == TextLayerMode.ONLY and not self.model.reads_text_lines:
            raise InvalidMessage(
                f'text_layer "only" reads text lines from the PDF and runs no engine; '
                f"{self.model.value} runs layout on the rendered page, so use it with "
                f"{OcrModel.PP_OCRV5.value} or {OcrModel.PP_OCRV6.value}, "
                f'or text_layer "auto" / "ocr"'
            )
        return self

    def with_lang(self, lang: str) -> JobRequest:
        return self.model_copy(update={"lang": lang})


@dataclass(frozen=True)
class RejectedJob:
    """A message that names an input but cannot become a runnable job; it ends FAILED at once.

    The fields are the message's own values, unvalidated, so the failed record shows what the
    user sent and a redelivery of the same message maps to the same job id.
    """

    bucket: str
    key: str
    error: JobError
    model: str = ""
    lang: str | None = None
    explicit_job_id: str | None = None
    options: str = ""  # canonical JSON of the options as sent
    object_version: str | None = None
    origin: Origin = "message"
    owner: str | None = None

    @property
    def job_id(self) -> str:
        return self.explicit_job_id or job_identity(
            bucket=self.bucket,
            key=self.key,
            object_version=self.object_version or "",
            model=self.model,
            lang=self.lang or "",
            options=self.options,
        )


JobItem = JobRequest | RejectedJob


def validate_language(lang: str) -> str:
    """A PaddleOCR language code, matched case-insensitively; UnsupportedLanguage otherwise."""
    code = lang.strip()
    if code not in SUPPORTED_LANGUAGES and code.lower() in SUPPORTED_LANGUAGES:
        code = code.lower()
    if code not in SUPPORTED_LANGUAGES:
        raise UnsupportedLanguage(
            f"unknown language code {lang!r}; use a PaddleOCR code such as en, ch, fr, de, japan"
        )
    return code


def job_identity(
    *, bucket: str, key: str, object_version: str, model: str, lang: str, options: str
) -> str:
    """The deterministic job id of one object version, model, language and options."""
    identity = "|".join((bucket, key, object_version, model, lang, options))
    return hashlib.sha256(identity.encode()).hexdigest()[:32]


def derive_job_id(request: JobRequest, *, object_version: str, lang: str) -> str:
    """Deterministic id: the same object version, model, language and options map to one job.

    A redelivered message or a duplicated S3 event therefore lands on the existing record.
    """
    return job_identity(
        bucket=request.bucket,
        key=request.key,
        object_version=object_version,
        model=request.model.value,
        lang=lang,
        options=request.options.canonical(),
    )


class ChunkSpec(BaseModel):
    """One page range of a chunked document (pages are 1-based and inclusive)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int = Field(ge=0)
    first_page: int = Field(ge=1)
    last_page: int = Field(ge=1)
    # The chunk's own PDF (its pages only), when the input was split: a key in the results
    # bucket (named too, for the VL endpoint, which is sent the chunk and nothing else);
    # None: read pages first..last of the original input.
    part_key: str | None = None
    part_bucket: str | None = None

    @property
    def page_count(self) -> int:
        return self.last_page - self.first_page + 1

    @property
    def label(self) -> str:
        if self.first_page == self.last_page:
            return f"page {self.first_page}"
        return f"pages {self.first_page}-{self.last_page}"


@dataclass(frozen=True)
class ChunkInput:
    """Where a chunk's pages are read from, and how they are numbered (`ocr_document`'s terms)."""

    bucket: str
    key: str
    first_page: int = 1
    last_page: int | None = None
    page_offset: int = 0

    @classmethod
    def of(cls, chunk: ChunkSpec, *, bucket: str, key: str) -> ChunkInput:
        """The chunk's own PDF when the input was split, else its pages of the input itself."""
        if chunk.part_key is not None and chunk.part_bucket is not None:
            return cls(chunk.part_bucket, chunk.part_key, page_offset=chunk.first_page - 1)
        return cls(bucket, key, first_page=chunk.first_page, last_page=chunk.last_page)


class ProcessorTask(StrEnum):
    """What an invocation of the OCR processor is asked to do with its job."""

    OCR = "ocr"  # read the job's pages (or its chunk's) and finish what it can
    # The VL endpoint read the pages of the job (or of its chunk): finish from its output.
    ENDPOINT_RESULT = "endpoint-result"


class EndpointResult(BaseModel):
    """One asynchronous inference's outcome as SageMaker notified it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    output_location: str | None = None  # s3:// URI of the output; None: none was reported
    received_time: datetime | None = None  # when the endpoint received the request
    event_time: datetime | None = None  # when it finished


class DispatchedJob(BaseModel):
    """A validated job handed to a worker: the processor's async event and the VL manifest."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    job_id: str
    bucket: str
    key: str
    model: OcrModel
    lang: str
    options: JobOptions = Field(default_factory=JobOptions)
    owner: str | None = None  # who sent it; its results go under results/<owner>/
    # One page range of a large document (the processor's fan-out); None: the whole document.
    chunk: ChunkSpec | None = None
    task: ProcessorTask = ProcessorTask.OCR
    endpoint_result: EndpointResult | None = None  # with task ENDPOINT_RESULT

    _model = field_validator("model", mode="before")(parse_model)

    @model_validator(mode="after")
    def _endpoint_result_with_its_task(self) -> DispatchedJob:
        if (self.task is ProcessorTask.ENDPOINT_RESULT) != (self.endpoint_result is not None):
            raise ValueError(f"endpoint_result goes with task {ProcessorTask.ENDPOINT_RESULT}")
        return self
