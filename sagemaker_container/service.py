"""One invocation, independent of HTTP: load (manifest + S3 object) → decode → predict → encode.

Every failure a caller can cause is a typed JobError with a stable code; the HTTP layer only
maps those to status codes.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError

from idp.aws.s3 import read_input, s3_uri
from idp.contract.errors import (
    EmptyInput,
    InvalidMessage,
    TooManyPages,
    UnsupportedModel,
)
from idp.contract.jobs import ChunkInput, DispatchedJob, validate_language
from idp.contract.names import OcrModel, TextLayerMode
from idp.contract.results import OcrResult
from idp.contract.timestamps import ms
from idp.document.ocr.pipeline import ocr_document
from sagemaker_container.engines import LoadedEngines
from sagemaker_container.settings import ServerSettings

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

MAX_MANIFEST_BYTES: Final = 64 * 1024


def parse_manifest(body: bytes) -> DispatchedJob:
    """The input manifest the invoker wrote (idp.contract.jobs.DispatchedJob), validated."""
    if len(body) > MAX_MANIFEST_BYTES:
        raise InvalidMessage(f"manifest is {len(body)} bytes; at most {MAX_MANIFEST_BYTES}")
    try:
        payload: Any = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidMessage(f"manifest is not valid JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise InvalidMessage("manifest must be a JSON object")
    try:
        job = DispatchedJob.model_validate(payload)  # an unknown model raises UnsupportedModel
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'manifest'}: {err['msg']}"
            for err in exc.errors()
        )
        raise InvalidMessage(f"invalid manifest: {problems}") from None
    if job.model is not OcrModel.PADDLEOCR_VL:
        raise UnsupportedModel(
            f"this endpoint serves {OcrModel.PADDLEOCR_VL.value}, not {job.model.value}"
        )
    validate_language(job.lang)
    # Page orientation (on by default for every job) is a step of the CPU models only: this
    # endpoint reads pages as given and records rotation 0, so the option is not refused here.
    if job.options.use_doc_unwarping:
        raise InvalidMessage(
            "document unwarping is not offered by the "
            f"{OcrModel.PADDLEOCR_VL.value} endpoint; leave use_doc_unwarping false"
        )
    if job.options.text_layer == TextLayerMode.ONLY:
        # The VL model reads every page's pixels (layout + VLM); "auto" is accepted and OCRs.
        raise InvalidMessage(
            f'text_layer "only" is not offered by the {OcrModel.PADDLEOCR_VL.value} endpoint, '
            'which reads every page from its pixels; use "auto" or "ocr"'
        )
    return job


def fetch_document(s3: S3Client, *, bucket: str, key: str, max_bytes: int) -> bytes:
    """The object's bytes; InputNotFound / InputTooLarge / EmptyInput for what a user can cause."""
    data = read_input(s3, bucket, key, max_bytes=max_bytes)
    if not data:
        raise EmptyInput(f"input {s3_uri(bucket, key)} is empty (0 bytes)")
    return data


def run_job(
    job: DispatchedJob,
    *,
    engines: LoadedEngines,
    s3: S3Client,
    settings: ServerSettings,
    lease_timeout_s: float | None = None,
) -> OcrResult:
    started = time.perf_counter()
    # A chunk of a large document (planned by the OCR processor) reads its own PDF, or its
    # pages of the input; the page limit applies to the pages this invocation reads.
    source = ChunkInput(job.bucket, job.key)
    max_pages = settings.max_pages
    if job.chunk is not None:
        if job.chunk.page_count > settings.max_pages:
            raise TooManyPages(
                f"chunk {job.chunk.label} has {job.chunk.page_count} pages; this endpoint takes "
                f"at most {settings.max_pages} per invocation"
            )
        source = ChunkInput.of(job.chunk, bucket=job.bucket, key=job.key)
        max_pages = max(settings.max_pages, source.last_page or 0)
    data = fetch_document(
        s3, bucket=source.bucket, key=source.key, max_bytes=settings.max_input_bytes
    )
    fetched = time.perf_counter()
    with engines.pool.lease(timeout_s=lease_timeout_s) as engine:
        leased = time.perf_counter()
        outcome = ocr_document(
            data,
            engine=engine,
            options=job.options,
            max_pages=max_pages,
            page_batch=settings.page_batch,
            first_page=source.first_page,
            last_page=source.last_page,
            page_offset=source.page_offset,
        )
    timings = {
        "fetch": ms(fetched - started),
        "queue": ms(leased - fetched),
        **outcome.timings_ms,
        "total": ms(time.perf_counter() - started),
    }
    return OcrResult.assemble(
        job_id=job.job_id,
        model=job.model.value,
        lang=job.lang,
        engine=engines.info,
        source=outcome.source(bucket=job.bucket, key=job.key),
        pages=outcome.pages,
        timings_ms=timings,
    )
