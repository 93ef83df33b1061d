"""Environment-variable keys and constants of the VL inference container (sagemaker_container)."""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class VlEnv(StrEnum):
    """Environment-variable keys read by the VL inference container (sagemaker_container)."""

    ENGINE = "VL_ENGINE"  # paddleocr-vl | substitute-ppocrv5
    HOST = "VL_HOST"
    PORT = "VL_PORT"  # SageMaker requires 8080; tests pick a free port
    MAX_CONCURRENT_REQUESTS = "VL_MAX_CONCURRENT_REQUESTS"
    REQUEST_TIMEOUT_SECONDS = "VL_REQUEST_TIMEOUT_SECONDS"
    ENGINE_INSTANCES = "VL_ENGINE_INSTANCES"
    MODELS_DIR = "VL_MODELS_DIR"  # weights baked into the image
    PIPELINE_VERSION = "VL_PIPELINE_VERSION"
    REGION_CONCURRENCY = "VL_REGION_CONCURRENCY"  # VLM requests in flight per pipeline
    PAGE_BATCH = "VL_PAGE_BATCH"  # pages of a document handed to the VL pipeline together
    DEVICE = "VL_DEVICE"
    SERVER_URL = "VL_SERVER_URL"  # use an external OpenAI-compatible VLM server, supervise none
    SERVER_COMMAND = "VL_SERVER_COMMAND"
    SERVER_PORT = "VL_SERVER_PORT"
    SERVER_GPU_MEMORY_UTILIZATION = "VL_SERVER_GPU_MEMORY_UTILIZATION"
    SERVER_MAX_NUM_SEQS = "VL_SERVER_MAX_NUM_SEQS"
    SERVER_EXTRA_ARGS = "VL_SERVER_EXTRA_ARGS"
    SERVER_STARTUP_TIMEOUT_SECONDS = "VL_SERVER_STARTUP_TIMEOUT_SECONDS"
    SERVER_MAX_RESTARTS = "VL_SERVER_MAX_RESTARTS"
    WARMUP = "VL_WARMUP"


VL_CONTAINER_PORT: Final = 8080  # SageMaker's serving contract
VL_ENGINE_PADDLEOCR_VL: Final = "paddleocr-vl"
VL_ENGINE_SUBSTITUTE_PPOCRV5: Final = "substitute-ppocrv5"
