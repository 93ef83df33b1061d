"""Processor outcomes that need no OCR: missing models or input, limits, faults, duplicates."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable

import pytest
from botocore.exceptions import ClientError

from devkit import synthetic
from idp.contract.names import JobStatus, OcrModel
from idp.document.ocr.models.cache import archive_key
from idp.document.ocr.registry import EngineRegistry
from ocr_processor_image import handler
from ocr_processor_image.job import process_job
from ocr_processor_image.warm_state import WarmState
from tests.archives import tar_gz
from tests.processor_account import CACHE_BUCKET, RESULTS_BUCKET, Aws, Invoke


@pytest.fixture
def invoke(
    start_handler: Callable[[EngineRegistry], Invoke], empty_cache_registry: EngineRegistry
) -> Invoke:
    """The handler with an empty model cache (and no hub access)."""
    return start_handler(empty_cache_registry)


def _png() -> bytes:
    return synthetic.encode(
        synthetic.render_page(["Hello"], size=(200, 60), font_size=20, margin=10), "PNG"
    )


def test_missing_model_fails_fast_with_model_unavailable_naming_it(
    aws: Aws, invoke: Invoke
) -> None:
    # GIVEN an empty model cache, no hub access, and a French PP-OCRv5 job
    job = aws.create_job("input/PP-OCRv5/page.png", _png(), lang="fr")
    # WHEN it is processed
    started = time.perf_counter()
    invoke(job)
    elapsed = time.perf_counter() - started
    # THEN it is FAILED with MODEL_UNAVAILABLE naming the model, without a long retry loop
    record = aws.record(job.job_id)
    assert record["status"] == JobStatus.FAILED
    assert record["error"]["code"] == "MODEL_UNAVAILABLE"
    assert "PP-OCRv5_mobile_det" in record["error"]["message"]
    assert elapsed < 10


def test_tampered_model_archive_fails_the_job_naming_the_model(aws: Aws, invoke: Invoke) -> None:
    # GIVEN PP-OCRv5's detection model replaced in the cache by other files, with metadata that
    # claims their sha256 (whoever can write the archive can write that too)
    model = "PP-OCRv5_mobile_det"
    planted = tar_gz(
        {f"{model}/inference.yml": b"Global: {}", f"{model}/inference.pdiparams": b"x"}
    )
    aws.s3.put_object(
        Bucket=CACHE_BUCKET,
        Key=archive_key(model),
        Body=planted,
        Metadata={"sha256": hashlib.sha256(planted).hexdigest()},
    )
    job = aws.create_job("input/PP-OCRv5/page.png", _png())
    # WHEN the job is processed
    invoke(job)
    # THEN it is FAILED with MODEL_UNAVAILABLE: the archive is not the pinned one
    record = aws.record(job.job_id)
    assert record["status"] == JobStatus.FAILED
    assert record["error"]["code"] == "MODEL_UNAVAILABLE"
    assert f"model {model}:" in record["error"]["message"]
    assert "does not match its pin" in record["error"]["message"]


def test_structure_job_without_its_weights_fails_with_model_unavailable(
    aws: Aws, invoke: Invoke
) -> None:
    # GIVEN a PP-StructureV3 job and a cache without PP-StructureV3's weights
    job = aws.create_job("input/PP-StructureV3/page.png", _png(), model=OcrModel.PP_STRUCTUREV3)
    # WHEN it is processed
    invoke(job)
    # THEN the job says which model is missing and how to fill the cache
    record = aws.record(job.job_id)
    assert record["error"]["code"] == "MODEL_UNAVAILABLE"
    assert "PP-DocLayout_plus-L" in record["error"]["message"]
    assert "sync" in record["error"]["message"]


@pytest.mark.parametrize(
    ("setup", "code"),
    [
        ("missing", "INPUT_NOT_FOUND"),
        ("oversized", "INPUT_TOO_LARGE"),
        ("bad-language", "UNSUPPORTED_LANGUAGE"),
        ("vl-model", "UNSUPPORTED_MODEL"),
    ],
)
def test_job_that_cannot_run_here_fails_with_its_code(
    setup: str, code: str, aws: Aws, invoke: Invoke
) -> None:
    # GIVEN a job whose input, language or model this worker cannot serve
    if setup == "missing":
        job = aws.create_job("input/PP-OCRv5/gone.png", None)
    elif setup == "oversized":
        job = aws.create_job("input/PP-OCRv5/big.png", b"\x89PNG" + b"\0" * 6 * 1024 * 1024)
    elif setup == "bad-language":
        job = aws.create_job("input/PP-OCRv5/page.png", _png(), lang="klingon")
    else:
        job = aws.create_job("input/PaddleOCR-VL/page.png", _png(), model=OcrModel.PADDLEOCR_VL)
    # WHEN it is processed
    response = invoke(job)
    # THEN it ends FAILED with that code, and the handler returned normally
    assert response["status"] == JobStatus.FAILED
    assert aws.record(job.job_id)["error"]["code"] == code


def test_terminal_job_is_not_processed_again(aws: Aws, invoke: Invoke) -> None:
    # GIVEN a job that already FAILED (e.g. a duplicate async delivery after completion)
    job = aws.create_job("input/PP-OCRv5/gone.png", None)
    invoke(job)
    first = aws.record(job.job_id)
    # WHEN it is delivered again
    response = invoke(job)
    # THEN nothing changes: no second attempt, same terminal record
    assert response["status"] == "SKIPPED"
    assert aws.record(job.job_id) == first


def test_unexpected_fault_is_raised_for_a_lambda_retry(
    aws: Aws, empty_cache_registry: EngineRegistry
) -> None:
    # GIVEN a job whose result cannot be written (the results bucket is gone: a fault, not
    # the user's doing) and a stand-in engine (the real one is not needed to reach the write)
    from tests.idp.document.ocr.test_registry import StaticEngine

    registry = EngineRegistry(
        resolve=lambda name: aws.settings.models_root,
        factories={OcrModel.PP_OCRV5: lambda *_: StaticEngine()},
    )
    aws.s3.delete_bucket(Bucket=RESULTS_BUCKET)
    job = aws.create_job("input/PP-OCRv5/page.png", _png())
    # WHEN it is processed
    with pytest.raises(ClientError):
        process_job(
            job, WarmState(settings=aws.settings, s3=aws.s3, store=aws.store, engines=registry)
        )
    # THEN the job stays active (the retry or the on-failure destination ends it) and the
    # attempt is counted
    record = aws.record(job.job_id)
    assert record["status"] == JobStatus.PROCESSING
    assert record["attempts"] == 1
    assert empty_cache_registry.loaded() == []


def test_invalid_event_is_rejected_without_raising(aws: Aws, invoke: Invoke) -> None:
    # GIVEN an event that names a job but is not a DispatchedJob
    job = aws.create_job("input/PP-OCRv5/page.png", _png())
    # WHEN the processor receives it
    response = invoke({"job_id": job.job_id, "bucket": 7})
    # THEN the job is FAILED as an invalid message and no retry is triggered
    assert response["status"] == "REJECTED"
    assert aws.record(job.job_id)["error"]["code"] == "INVALID_MESSAGE"


def test_warm_state_is_built_from_the_environment_without_loading_an_engine(
    aws: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the processor's environment as the stack sets it
    for key, value in {
        "JOBS_TABLE": "idp-test-jobs",
        "RESULTS_BUCKET": RESULTS_BUCKET,
        "MODEL_CACHE_BUCKET": "idp-test-model-cache",
        "MAX_PAGES": "7",
        "MAX_INPUT_BYTES": "1000",
        "ALLOW_HUB_DOWNLOAD": "false",
        "OCR_CPU_THREADS": "3",
    }.items():
        monkeypatch.setenv(key, value)
    # WHEN a cold container builds its warm state
    warm = handler.build_warm_state()
    # THEN the settings come from the environment and no engine is loaded until a job needs it
    assert (warm.settings.max_pages, warm.settings.max_input_bytes) == (7, 1000)
    assert warm.settings.allow_hub_download is False
    assert warm.engines.settings.cpu_threads == 3
    assert warm.engines.loaded() == []
