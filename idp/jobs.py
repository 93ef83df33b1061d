"""The job message: direct JSON messages and S3 event notifications arriving through SQS."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal
from urllib.parse import unquote_plus

from aws_lambda_powertools.utilities.data_classes import S3Event
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from idp import names
from idp.errors import InvalidMessage, UnsupportedLanguage, UnsupportedModel
from idp.names import OcrModel


class JobOptions(BaseModel):
    """Per-job engine options; part of the job identity and of the result cache key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pdf_scale: float = Field(default=names.DEFAULT_PDF_SCALE, gt=0, le=6)
    use_doc_orientation_classify: bool = False
    use_doc_unwarping: bool = False
    use_textline_orientation: bool = False

    def canonical(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


class JobRequest(BaseModel):
    """One unit of work: an object in S3 to OCR with a model and a language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bucket: str = Field(min_length=3)
    key: str = Field(min_length=1)
    model: OcrModel
    lang: str | None = None  # None: take it from the object's metadata, else the default
    job_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]{1,128}$")
    options: JobOptions = Field(default_factory=JobOptions)
    object_version: str | None = None  # versionId / sequencer / ETag from the event, if any
    origin: Literal["s3-event", "message"] = "message"

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

    def with_lang(self, lang: str) -> JobRequest:
        return self.model_copy(update={"lang": lang})


def validate_language(lang: str) -> str:
    code = lang.strip()
    if code not in names.SUPPORTED_LANGUAGES:
        raise UnsupportedLanguage(
            f"unknown language code {lang!r}; use a PaddleOCR code such as en, ch, fr, de, japan"
        )
    return code


def derive_job_id(request: JobRequest, *, object_version: str, lang: str) -> str:
    """Deterministic id: the same object version, model, language and options map to one job.

    A redelivered message or a duplicated S3 event therefore lands on the existing record.
    """
    identity = "|".join(
        (
            request.bucket,
            request.key,
            object_version,
            request.model.value,
            lang,
            request.options.canonical(),
        )
    )
    return hashlib.sha256(identity.encode()).hexdigest()[:32]


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


def parse_message_body(body: str) -> list[JobRequest]:
    """Turn one SQS message body into job requests.

    Returns [] for messages that carry no job (the `s3:TestEvent`, non-create S3 events).
    Raises InvalidMessage (or UnsupportedModel) for a body no job can be made of.
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
        return _requests_from_s3_event(payload)
    return [_request_from_direct(payload)]


def _request_from_direct(payload: dict[str, Any]) -> JobRequest:
    try:
        return JobRequest.model_validate({**payload, "origin": "message"})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'message'}: {err['msg']}"
            for err in exc.errors()
        )
        raise InvalidMessage(f"invalid job message: {problems}") from None


def _requests_from_s3_event(payload: dict[str, Any]) -> list[JobRequest]:
    requests: list[JobRequest] = []
    for record in S3Event(payload).records:
        if record.get("eventSource") != "aws:s3" or not record.event_name.startswith(
            "ObjectCreated:"
        ):
            continue
        key = unquote_plus(record.s3.get_object.key)
        obj = record.s3.get_object
        version = obj.version_id or obj.get("sequencer") or obj.etag or None
        requests.append(
            JobRequest(
                bucket=record.s3.bucket.name,
                key=key,
                model=model_from_key(key),
                object_version=version,
                origin="s3-event",
            )
        )
    return requests


class DispatchedJob(BaseModel):
    """A validated job handed to a worker: the processor's async event and the VL manifest."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    job_id: str
    bucket: str
    key: str
    model: OcrModel
    lang: str
    options: JobOptions = Field(default_factory=JobOptions)
