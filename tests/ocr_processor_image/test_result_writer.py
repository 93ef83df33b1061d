"""result.json and result.md have one writer (idp.flow.result_files), whatever path a job takes.

Every way a job gets its result runs here, in this process, against moto's S3: a document read
in one invocation, the same bytes again (from the result cache), a long document read in chunks
and merged, and a PaddleOCR-VL result, whole and in chunks. A botocore hook on the S3 client
sees every request that writes a result file and records which code sent it: each must come
from `ResultFiles`, and each result.json must hold the bytes that writer makes of its result.
"""

from __future__ import annotations

import inspect
import json
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import pytest

from devkit import synthetic
from idp.contract import names
from idp.contract.jobs import DispatchedJob, EndpointResult, ProcessorTask
from idp.contract.names import JobStatus, OcrModel
from idp.contract.results import OcrResult, result_key
from idp.flow import result_files
from idp.flow.chunks.plan import ChunkPlan, plan_key
from ocr_processor_image.job import process_job
from ocr_processor_image.warm_state import WarmState
from tests.ocr_processor_image.test_endpoint_results import endpoint_output
from tests.processor_account import RESULTS_BUCKET, Aws, WarmEngines

RESULT_FILES = (names.RESULT_JSON, names.RESULT_MD)
WRITES = ("PutObject", "CreateMultipartUpload")


@dataclass
class ResultWrites:
    """Every S3 request that wrote a result file, and the module of the project that sent it."""

    writers: list[tuple[str, str]] = field(default_factory=list)

    def __call__(self, params: dict[str, Any], **_: Any) -> None:
        key = str(params.get("Key", ""))
        if not (key.startswith(names.RESULTS_PREFIX) and key.endswith(RESULT_FILES)):
            return
        modules = _project_callers(inspect.currentframe())
        if not modules:
            # A multipart or threaded upload sends from s3transfer's worker thread, while the
            # thread that asked for it waits inside the project's call.
            modules = _project_callers(sys._current_frames()[threading.main_thread().ident or 0])
        self.writers.append((key.rpartition("/")[2], modules[0] if modules else "?"))


def _project_callers(frame: FrameType | None) -> list[str]:
    """The project modules on a thread's stack, innermost first."""
    modules = []
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if name.startswith(("idp.", "ocr_processor_image.")):
            modules.append(name)
        frame = frame.f_back
    return modules


@dataclass
class InlineChunks:
    """Lambda's async invoke of a chunk, run here and now: moto cannot execute a function, so
    this stands in at that boundary (the local pipeline runs the real one, tests/devkit/local)."""

    warm: Callable[[], WarmState]
    target: str = "inline"

    def invoke_async(self, job: DispatchedJob) -> None:
        process_job(job, self.warm())


@pytest.fixture
def writes(aws: Aws) -> Iterator[ResultWrites]:
    recorder = ResultWrites()
    for operation in WRITES:
        aws.s3.meta.events.register(f"before-parameter-build.s3.{operation}", recorder)
    yield recorder
    for operation in WRITES:
        aws.s3.meta.events.unregister(f"before-parameter-build.s3.{operation}", recorder)


@pytest.fixture
def warm(aws: Aws, warm_engines: WarmEngines) -> WarmState:
    """The processor with the warm PP-OCRv5 engine, chunks of 2 pages run inline, and a VL
    endpoint (moto's sagemaker-runtime accepts the inferences and runs nothing)."""
    state: list[WarmState] = []
    built = aws.with_vl_endpoint(
        warm_engines.registry, chunks=InlineChunks(lambda: state[0]), chunk_pages=2
    )
    state.append(built)
    return built


def _pages_pdf(count: int) -> bytes:
    data, _ = synthetic.long_pdf(count)
    return data


def _vl_result(aws: Aws, job: DispatchedJob, pages: range, name: str) -> DispatchedJob:
    key = f"{names.VL_OUTPUT_PREFIX}{name}.out"
    output = endpoint_output(job, pages)
    aws.s3.put_object(Bucket=RESULTS_BUCKET, Key=key, Body=output.model_dump_json())
    return job.model_copy(
        update={
            "task": ProcessorTask.ENDPOINT_RESULT,
            "endpoint_result": EndpointResult(output_location=f"s3://{RESULTS_BUCKET}/{key}"),
        }
    )


def _run_whole(aws: Aws, warm: WarmState) -> str:
    job = aws.create_job("input/PP-OCRv5/one.pdf", _pages_pdf(1))
    process_job(job, warm)
    return job.job_id


def _run_cached(aws: Aws, warm: WarmState) -> str:
    data = _pages_pdf(1)
    process_job(aws.create_job("input/PP-OCRv5/first.pdf", data), warm)
    job = aws.create_job("input/PP-OCRv5/again.pdf", data)
    process_job(job, warm)
    assert aws.record(job.job_id).get("cached") is True
    return job.job_id


def _run_chunked(aws: Aws, warm: WarmState) -> str:
    job = aws.create_job("input/PP-OCRv5/four.pdf", _pages_pdf(4))
    process_job(job, warm)  # fans out; each chunk runs inline and the last one merges
    return job.job_id


def _run_vl_whole(aws: Aws, warm: WarmState) -> str:
    job = aws.create_job("input/PaddleOCR-VL/one.pdf", _pages_pdf(1), model=OcrModel.PADDLEOCR_VL)
    process_job(job, warm)
    process_job(_vl_result(aws, job, range(1, 2), job.job_id), warm)
    return job.job_id


def _run_vl_chunked(aws: Aws, warm: WarmState) -> str:
    job = aws.create_job("input/PaddleOCR-VL/four.pdf", _pages_pdf(4), model=OcrModel.PADDLEOCR_VL)
    process_job(job, warm)  # fans out to the endpoint
    plan = ChunkPlan.model_validate_json(aws.object_bytes(RESULTS_BUCKET, plan_key(job.job_id)))
    for chunk in plan.chunks:
        pages = range(chunk.first_page, chunk.last_page + 1)
        event = _vl_result(aws, job, pages, f"{job.job_id}-{chunk.index}")
        process_job(event.model_copy(update={"chunk": chunk}), warm)
    return job.job_id


PATHS: dict[str, Callable[[Aws, WarmState], str]] = {
    "read-in-one-invocation": _run_whole,
    "from-the-result-cache": _run_cached,
    "read-in-chunks-and-merged": _run_chunked,
    "vl-whole": _run_vl_whole,
    "vl-in-chunks-and-merged": _run_vl_chunked,
}


@pytest.mark.ocr
@pytest.mark.parametrize("path", list(PATHS))
def test_every_path_to_a_result_writes_it_through_the_one_writer(
    path: str, aws: Aws, warm: WarmState, writes: ResultWrites
) -> None:
    # WHEN a job takes this path to its result
    job_id = PATHS[path](aws, warm)

    # THEN it completed, every result file it wrote came from idp.flow.result_files, and its
    # result.json is that writer's compact JSON of the result
    assert aws.record(job_id)["status"] == JobStatus.COMPLETED
    assert writes.writers, "no result file was written"
    assert {module for _, module in writes.writers} == {result_files.__name__}
    body = aws.object_bytes(
        RESULTS_BUCKET, result_key(job_id, owner=aws.record(job_id).get("owner"))
    )
    assert body == OcrResult.model_validate_json(body).model_dump_json().encode()
    assert json.loads(body)["job_id"] == job_id
