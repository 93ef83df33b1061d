"""A job's record in the status table, as `JobStore` reads it back (numbers as int/float).

Every attribute any component writes is named here, so a misspelt key is a type error rather
than a silent `None`. Only `job_id` and `status` are always present; the rest arrive as the
job moves on (dispatch, processing, chunks, completion or failure).
"""

from __future__ import annotations

from typing import Any, Required, TypedDict


class ErrorRecord(TypedDict):
    """Why a job FAILED: a stable code (`idp.contract.errors`) and a message for people."""

    code: str
    message: str


class JobRecord(TypedDict, total=False):
    # -- identity and request (create / create_failed) --
    job_id: Required[str]
    status: Required[str]  # a `JobStatus` value
    model: str
    backend: str
    lang: str
    options: dict[str, Any]
    input_bucket: str
    input_key: str
    input_uri: str
    input_size_bytes: int
    object_version: str
    content_sha256: str
    origin: str  # how the job arrived: an S3 event or a submitted message
    owner: str  # who sent it: the IAM principal id (SQS SenderId, or the S3 uploader)
    attempts: int
    created_at: str  # ISO 8601 UTC, as `idp.contract.timestamps.utc_now` writes it
    updated_at: str
    started_at: str
    finished_at: str
    expires_at: int  # epoch seconds: the status table's TTL deletes the record after it
    # -- dispatch (invoker) --
    dispatched_at: str
    dispatch_lease_until: str
    dispatch_confirmed_at: str
    dispatch_target: str
    dispatch_failures: int
    last_dispatch_error: str
    vl_endpoint: str
    endpoint_scale_out: str
    # -- processing --
    processing_invocation: str
    processing_lease_until: str
    submit_invocation: str
    inference_id: str
    manifest_uri: str
    output_location: str
    failure_location: str
    inference_output: str
    failure_uri: str  # a failed async inference: where SageMaker wrote its error
    failure_reason: str
    failure_condition: str  # a crashed processor event: Lambda's destination condition
    # -- a large document's chunks --
    fan_out_invocation: str
    fan_out_timings_ms: dict[str, float]
    pages_total: int
    pages_done: int
    chunk_pages: int
    chunks_total: int
    chunks_done: int
    chunks_committed: list[int]
    page_progress: dict[str, int]
    merge_invocation: str
    merge_lease_until: str
    merge_started_at: str
    merged_at: str
    # -- the outcome --
    result_uri: str
    markdown_uri: str
    pdf_uri: str  # result.pdf, where the searchable PDF was written
    textract_uri: str  # result.textract.json, unless the job turned it off
    page_count: int
    media_type: str
    engine: dict[str, Any]
    cached: bool
    timings_ms: dict[str, float]
    error: ErrorRecord
    failed_pages: str
    review_pages: list[int]  # pages whose quality verdict asks a person to look
