"""Knobs of the local runtime (devkit/local/runtime.py) and of the services it emulates."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field

from devkit.local.faults import Faults
from idp.contract import names
from idp.contract.topology import (
    CONVERSION_TIME_LIMIT_SECONDS,
    PROCESSOR_ASYNC_RETRY_ATTEMPTS,
    PROCESSOR_TIMEOUT_SECONDS,
    STALE_PROCESSING_SECONDS,
    STALE_QUEUED_SECONDS,
)


class LocalSettings(BaseModel):
    """Knobs of the local runtime. AWS's own timings are shortened where waiting adds nothing."""

    work_dir: Path
    invoker_batch_size: int = Field(default=1, ge=1, le=10)
    processor_concurrency: int = Field(default=1, ge=1)
    async_retry_attempts: int = PROCESSOR_ASYNC_RETRY_ATTEMPTS
    async_retry_delay_seconds: float = 0.5  # Lambda waits ~1 and ~2 minutes
    poll_wait_seconds: int = 1
    visibility_timeout_seconds: int = 10  # the stack uses 6 × the invoker timeout
    alarm_period_seconds: float = 2.0  # the stack's alarm uses 60 s periods
    alarm_evaluation_periods: int = names.SCALE_IN_EVALUATION_PERIODS
    processor_timeout_seconds: float = PROCESSOR_TIMEOUT_SECONDS
    vl_enabled: bool = True
    vl_substitute: bool = False  # run the VL plumbing with the substitute PP-OCRv5 engine
    vl_startup_timeout_seconds: float = 300.0
    models_dir: Path | None = None  # offline weights for the substitute VL engine
    # Run the OCR processor from this container image, as Lambda runs it (Docker needed),
    # instead of as worker processes of this checkout's code.
    processor_image: str | None = None
    # Run the Office converter from this container image (Docker needed), instead of as a
    # worker process with the host's LibreOffice.
    converter_image: str | None = None
    # How long one Office document's conversion may run (the stack's CONVERSION_TIME_LIMIT).
    conversion_time_limit_seconds: float = Field(default=CONVERSION_TIME_LIMIT_SECONDS, gt=0)
    sweep_interval_seconds: float = 60.0  # the stack runs the sweeper every 15 minutes
    stale_processing_seconds: float = STALE_PROCESSING_SECONDS
    stale_queued_seconds: float = STALE_QUEUED_SECONDS
    max_pages: int = names.DEFAULT_MAX_PAGES
    max_input_bytes: int = names.DEFAULT_MAX_INPUT_BYTES
    chunk_pages: int = Field(default=names.DEFAULT_CHUNK_PAGES, ge=0)  # 0: never chunk
    faults: Faults = Field(default_factory=Faults)
    quiet_functions: bool = False  # functions log warnings only and emit no metric lines
    # Inference threads per processor environment; None: this machine's cores, shared evenly.
    processor_threads: int | None = Field(default=None, ge=1)

    @property
    def processor_cpu_threads(self) -> int:
        if self.processor_threads is not None:
            return self.processor_threads
        cores = len(os.sched_getaffinity(0))
        return max(1, cores // self.processor_concurrency)
