"""Job records arranged in a status table through the job store, as the pipeline writes them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from idp.contract.errors import JobError
from idp.contract.names import OcrModel
from idp.jobstore.store import JobStore


def create_queued_job(
    store: JobStore,
    job_id: str,
    *,
    input_key: str,
    input_bucket: str = "in",
    model: OcrModel = OcrModel.PP_OCRV5,
    options: Mapping[str, Any] | None = None,
) -> bool:
    """A QUEUED job (language "en") for `input_key`; False when it already exists."""
    return store.create(
        job_id=job_id,
        model=model,
        lang="en",
        input_bucket=input_bucket,
        input_key=input_key,
        options=options or {},
    )


def create_refused_job(
    store: JobStore, job_id: str, error: JobError, *, input_key: str, input_bucket: str = "in"
) -> bool:
    """A PP-OCRv5 job (language "en") for `input_key`, FAILED with `error` from the start as
    the invoker records a request it refuses; False when it already exists."""
    return store.create_failed(
        job_id=job_id,
        error=error,
        model=OcrModel.PP_OCRV5.value,
        lang="en",
        input_bucket=input_bucket,
        input_key=input_key,
    )
