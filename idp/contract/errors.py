"""Errors a user can cause, each with a stable code recorded on the job.

Anything that is not a `JobError` is a bug or a transient fault and is not swallowed.
"""

from __future__ import annotations

from typing import ClassVar


class JobError(Exception):
    """A failure caused by the job's input or request; ends the job FAILED, never retried."""

    code: ClassVar[str] = "JOB_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_record(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


class InvalidMessage(JobError):
    code = "INVALID_MESSAGE"


class KeyNotAllowed(JobError):
    """The sender may not have this key read: it lies outside the producer's own prefixes."""

    code = "KEY_NOT_ALLOWED"


class UnsupportedModel(JobError):
    code = "UNSUPPORTED_MODEL"


class UnsupportedLanguage(JobError):
    code = "UNSUPPORTED_LANGUAGE"


class UnsupportedMediaType(JobError):
    code = "UNSUPPORTED_MEDIA_TYPE"


class InputNotFound(JobError):
    code = "INPUT_NOT_FOUND"


class EmptyInput(JobError):
    code = "EMPTY_INPUT"


class InputTooLarge(JobError):
    code = "INPUT_TOO_LARGE"


class CorruptDocument(JobError):
    code = "CORRUPT_DOCUMENT"


class EncryptedDocument(JobError):
    code = "ENCRYPTED_DOCUMENT"


class ConversionTimeout(JobError):
    """An Office document's conversion to PDF ran past its time limit and was stopped."""

    code = "CONVERSION_TIMEOUT"


class ConversionFailed(JobError):
    """The converter could not turn an Office document into PDF (it crashed, or wrote nothing)."""

    code = "CONVERSION_FAILED"


class NoPages(JobError):
    code = "NO_PAGES"


class TooManyPages(JobError):
    code = "TOO_MANY_PAGES"


class ImageTooLarge(JobError):
    code = "IMAGE_TOO_LARGE"


class UnsupportedShape(JobError):
    """A page too thin or too elongated to hold a readable line of text (idp.document.budgets)."""

    code = "IMAGE_SHAPE_UNSUPPORTED"


class NoTextLayer(JobError):
    """text_layer "only" and a page whose text layer does not cover it (e.g. a scan)."""

    code = "NO_TEXT_LAYER"


class ModelUnavailable(JobError):
    code = "MODEL_UNAVAILABLE"


class EngineFailure(JobError):
    code = "ENGINE_ERROR"


class InferenceFailure(JobError):
    """The VL endpoint reported a failed inference."""

    code = "INFERENCE_FAILED"


class ProcessorCrashed(JobError):
    """The processor function died or timed out on every attempt."""

    code = "PROCESSOR_CRASHED"


class StaleJob(JobError):
    """A job stuck in PROCESSING beyond its deadline, ended by the stale-job sweep."""

    code = "STALE_JOB"


# Raised inside an engine, these are faults of the code or the machine, not of the user's
# document: they are re-raised (so the invocation is retried) instead of becoming ENGINE_ERROR.
ENGINE_FAULTS: tuple[type[BaseException], ...] = (
    MemoryError,
    RecursionError,
    ImportError,
    NameError,
    AttributeError,
    AssertionError,
)


class TransientError(Exception):
    """A retryable fault (throttling, endpoint updating): the message goes back to the queue."""


def error_from_code(code: str, message: str) -> JobError:
    """Rebuild a typed error from a recorded code (e.g. the VL container's JSON error body)."""
    for cls in _all_subclasses(JobError):
        if cls.code == code:
            return cls(message)
    error = JobError(message)
    error.code = code  # type: ignore[misc]
    return error


def _all_subclasses(cls: type[JobError]) -> list[type[JobError]]:
    out: list[type[JobError]] = []
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(_all_subclasses(sub))
    return out
