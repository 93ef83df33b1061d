"""Submitting PaddleOCR-VL work to the async endpoint: a whole document, or one of its chunks.

The OCR processor plans every VL job (it can open the document and count its pages; the invoker
cannot): a document of up to one chunk's pages is one invocation, a longer one is one invocation
per chunk, so that each stays well inside `InvocationTimeoutSeconds` and the instance's
concurrent invocations serve one large document together.

Each invocation's input is a manifest (the `DispatchedJob` JSON, with its `chunk` for a chunk)
in the results bucket. A whole document's inference id is its job id; a chunk's is the job id
with the chunk's number (each inference gets its own output object). A chunk's manifest key names
its job and chunk, and SageMaker's notification carries that key back
(`requestParameters.inputLocation`): that is how the completion handler finds a chunk's job.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from idp.aws.s3 import parse_s3_uri, s3_uri
from idp.contract import names
from idp.contract.jobs import DispatchedJob

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sagemaker_runtime import SageMakerRuntimeClient

_MAX_INFERENCE_ID: Final = 64  # SageMaker's limit
_CHUNK_MANIFEST: Final = re.compile(
    rf"^{re.escape(names.VL_MANIFEST_PREFIX)}(?P<job_id>[A-Za-z0-9_-]+)/chunk-(?P<index>\d+)\.json$"
)


def inference_id(job: DispatchedJob) -> str:
    """The job id; for a chunk, the job id (hashed when too long) and the chunk's number."""
    if job.chunk is None:
        return job.job_id
    suffix = f"-c{job.chunk.index:05d}"
    base = job.job_id
    if len(base) + len(suffix) > _MAX_INFERENCE_ID:
        base = hashlib.sha256(base.encode()).hexdigest()[:32]
    return base + suffix


def manifest_key(job: DispatchedJob) -> str:
    """sagemaker/manifests/<job_id>.json, or …/<job_id>/chunk-<n>.json for a chunk."""
    if job.chunk is None:
        return f"{names.VL_MANIFEST_PREFIX}{job.job_id}.json"
    return f"{names.VL_MANIFEST_PREFIX}{job.job_id}/chunk-{job.chunk.index:05d}.json"


@dataclass(frozen=True)
class ChunkManifest:
    job_id: str
    chunk_index: int


def chunk_of_manifest(uri: str | None) -> ChunkManifest | None:
    """The job and chunk a manifest URI names; None for a whole document's manifest."""
    if not uri:
        return None
    try:
        _, key = parse_s3_uri(uri)
    except ValueError:
        return None
    found = _CHUNK_MANIFEST.match(key)
    if found is None:
        return None
    return ChunkManifest(job_id=found["job_id"], chunk_index=int(found["index"]))


@dataclass(frozen=True)
class VlSubmission:
    """What the job record keeps about an accepted asynchronous inference."""

    inference_id: str
    manifest_uri: str
    output_location: str
    failure_location: str | None

    def facts(self) -> dict[str, str]:
        facts = {
            "inference_id": self.inference_id,
            "manifest_uri": self.manifest_uri,
            "output_location": self.output_location,
        }
        if self.failure_location:
            facts["failure_location"] = self.failure_location
        return facts


@dataclass(frozen=True, kw_only=True)
class VlEndpointSubmitter:
    """Writes a job's (or chunk's) manifest and starts its asynchronous inference.

    Also a `ProcessorInvoker` (`invoke_async`), so the processor's fan-out dispatches a VL
    document's chunks to the endpoint exactly as it dispatches a CPU document's to Lambda.
    """

    s3: S3Client
    runtime: SageMakerRuntimeClient
    endpoint_name: str
    results_bucket: str

    @property
    def target(self) -> str:
        return f"sagemaker:{self.endpoint_name}"

    def submit(self, job: DispatchedJob) -> VlSubmission:
        key = manifest_key(job)
        self.s3.put_object(
            Bucket=self.results_bucket,
            Key=key,
            Body=job.model_dump_json(exclude_none=True).encode(),
            ContentType="application/json",
        )
        manifest_uri = s3_uri(self.results_bucket, key)
        response = self.runtime.invoke_endpoint_async(
            EndpointName=self.endpoint_name,
            InputLocation=manifest_uri,
            ContentType="application/json",
            InferenceId=inference_id(job),
            InvocationTimeoutSeconds=names.VL_INVOCATION_TIMEOUT_SECONDS,
        )
        return VlSubmission(
            inference_id=response.get("InferenceId") or inference_id(job),
            manifest_uri=manifest_uri,
            output_location=response["OutputLocation"],
            failure_location=response.get("FailureLocation"),
        )

    def invoke_async(self, job: DispatchedJob) -> None:
        self.submit(job)
