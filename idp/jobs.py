"""The job message: direct JSON messages and S3 event notifications arriving through SQS.

A message either names an input (bucket + key) or it does not. One that names an input becomes a
`JobRequest`, or, when something about it is wrong (unknown model, bad options), a `RejectedJob`
that still carries a deterministic job id so the failure can be recorded where the user looks.
A message that cannot even name an input raises `InvalidMessage`: there is no job to fail.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import unquote_plus

from aws_lambda_powertools.utilities.data_classes import S3Event
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from idp import names
from idp.chunks import ChunkSpec
from idp.errors import InvalidMessage, JobError, UnsupportedLanguage, UnsupportedModel
from idp.names import OcrModel, TextLayerMode

# SageMaker's InferenceId takes at most 64 printable characters; the job id doubles as it.
JOB_ID_PATTERN: Final = r"^[A-Za-z0-9_-]{1,64}$"
_JOB_ID_RE: Final = re.compile(JOB_ID_PATTERN)

Origin = Literal["s3-event", "message"]


class JobOptions(BaseModel):
    """Per-job engine options; part of the job identity and of the result cache key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pdf_scale: float = Field(default=names.DEFAULT_PDF_SCALE, gt=0, le=6)
    # Read each page upright (0/90/180/270°, idp.ocr.orientation) on the CPU models;
    # PaddleOCR-VL reads pages as given and ignores it.
    use_doc_orientation_classify: bool = True
    use_doc_unwarping: bool = False
    use_textline_orientation: bool = False
    # result.pdf beside result.json: the input's pages with the recognized text invisibly on top.
    searchable_pdf: bool = True
    text_layer: TextLayerMode = TextLayerMode.AUTO

    def canonical(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


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

    @field_validator("model", mode="before")
    @classmethod
    def _parse_model(cls, value: object) -> OcrModel:
        if isinstance(value, OcrModel):
            return value
        try:
            return OcrModel.parse(str(value))
        except KeyError:
            known = ", ".join(m.value for m in OcrModel)
            raise UnsupportedModel(f"unknown OCR model {value!r}; use one of: {known}") from None

    @model_validator(mode="after")
    def _text_layer_only_for_text_lines(self) -> JobRequest:
        if self.options.text_layer == TextLayerMode.ONLY and self.model is not OcrModel.PP_OCRV5:
            raise InvalidMessage(
                f'text_layer "only" reads text lines from the PDF and runs no engine; '
                f"{self.model.value} runs layout on the rendered page, so use it with "
                f'{OcrModel.PP_OCRV5.value}, or text_layer "auto" / "ocr"'
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
    if code not in names.SUPPORTED_LANGUAGES and code.lower() in names.SUPPORTED_LANGUAGES:
        code = code.lower()
    if code not in names.SUPPORTED_LANGUAGES:
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


def model_from_key(key: str) -> OcrModel:
    """`input/<model>/<path>` → the model; other keys are not job inputs."""
    if not key.startswith(names.INPUT_PREFIX):
        raise InvalidMessage(f"object key {key!r} is not under {names.INPUT_PREFIX}<model>/")
    rest = key[len(names.INPUT_PREFIX) :]
    model_name, sep, path = rest.partition("/")
    if not sep or not path:
        raise InvalidMessage(
            f"object key {key!r} must look like {names.INPUT_PREFIX}<model>/<file>"
        )
    try:
        return OcrModel.parse(model_name)
    except KeyError:
        known = ", ".join(m.value for m in OcrModel)
        raise UnsupportedModel(
            f"unknown OCR model {model_name!r} in key {key!r}; use one of: {known}"
        ) from None


def read_message(body: str) -> list[JobItem]:
    """Turn one SQS message body into job requests and rejected jobs.

    Returns [] for messages that carry no job (the `s3:TestEvent`, non-create S3 events).
    Raises InvalidMessage for a body that names no input at all (not JSON, no bucket or key):
    such a message has no job to fail, so the caller lets it go to the dead-letter queue.
    """
    try:
        payload: Any = json.loads(body)
    except json.JSONDecodeError as exc:
        raise InvalidMessage(f"message body is not valid JSON: {exc.msg} at {exc.pos}") from None
    if not isinstance(payload, dict):
        raise InvalidMessage("message body must be a JSON object")
    if payload.get("Event") == "s3:TestEvent":
        return []
    if "Records" in payload:
        return _items_from_s3_event(payload)
    return [_item_from_direct(payload)]


def parse_message_body(body: str) -> list[JobRequest]:
    """Like `read_message`, but raise the first rejected job's error instead of returning it."""
    requests: list[JobRequest] = []
    for item in read_message(body):
        if isinstance(item, RejectedJob):
            raise item.error
        requests.append(item)
    return requests


def _item_from_direct(payload: dict[str, Any]) -> JobItem:
    bucket, key = payload.get("bucket"), payload.get("key")
    if not (isinstance(bucket, str) and bucket.strip() and isinstance(key, str) and key.strip()):
        raise InvalidMessage(
            'a job message needs "bucket" and "key" strings naming the input object '
            f"(got fields: {', '.join(sorted(payload)) or 'none'})"
        )
    try:
        return JobRequest.model_validate({**payload, "origin": "message"})
    except JobError as error:  # raised by a field validator (unknown model)
        return _rejected_direct(payload, bucket, key, error)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'message'}: {err['msg']}"
            for err in exc.errors()
        )
        return _rejected_direct(
            payload, bucket, key, InvalidMessage(f"invalid job message: {problems}")
        )


def _rejected_direct(
    payload: dict[str, Any], bucket: str, key: str, error: JobError
) -> RejectedJob:
    job_id = payload.get("job_id")
    lang = payload.get("lang")
    version = payload.get("object_version")
    return RejectedJob(
        bucket=bucket,
        key=key,
        error=error,
        model=str(payload.get("model", "")),
        lang=lang if isinstance(lang, str) else None,
        explicit_job_id=job_id if isinstance(job_id, str) and _JOB_ID_RE.match(job_id) else None,
        options=json.dumps(
            payload.get("options"), sort_keys=True, separators=(",", ":"), default=str
        ),
        object_version=version if isinstance(version, str) else None,
        origin="message",
    )


def _canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _items_from_s3_event(payload: dict[str, Any]) -> list[JobItem]:
    items: list[JobItem] = []
    for record in S3Event(payload).records:
        if record.get("eventSource") != "aws:s3" or not record.event_name.startswith(
            "ObjectCreated:"
        ):
            continue
        obj = record.s3.get_object
        key = unquote_plus(obj.key)
        version = obj.version_id or obj.get("sequencer") or obj.etag or None
        bucket = record.s3.bucket.name
        try:
            model = model_from_key(key)
        except JobError as error:
            model_segment = key[len(names.INPUT_PREFIX) :].partition("/")[0]
            items.append(
                RejectedJob(
                    bucket=bucket,
                    key=key,
                    error=error,
                    model=model_segment if key.startswith(names.INPUT_PREFIX) else "",
                    options=JobOptions().canonical(),
                    object_version=version,
                    origin="s3-event",
                )
            )
            continue
        items.append(
            JobRequest(
                bucket=bucket, key=key, model=model, object_version=version, origin="s3-event"
            )
        )
    return items


class DispatchedJob(BaseModel):
    """A validated job handed to a worker: the processor's async event and the VL manifest."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    job_id: str
    bucket: str
    key: str
    model: OcrModel
    lang: str
    options: JobOptions = Field(default_factory=JobOptions)
    # One page range of a large document (the processor's fan-out); None: the whole document.
    chunk: ChunkSpec | None = None
    # What the processor is asked to do: OCR, or (for a completed PaddleOCR-VL job, whose
    # pages the endpoint read) write result.pdf from the input and result.json.
    task: Literal["ocr", "searchable_pdf"] = "ocr"
