"""What a warm processor container keeps between invocations, and every step of a job works with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

    from idp.aws.telemetry import Telemetry
    from idp.document.ocr.registry import EngineRegistry
    from idp.flow.lambda_invoke import ProcessorInvoker
    from idp.flow.office_conversion import DocumentConverter
    from idp.flow.vl_submit import VlEndpointSubmitter
    from idp.jobstore.store import JobStore
    from ocr_processor_image.settings import ProcessorSettings


@dataclass(frozen=True)
class WarmState:
    """The processor's settings, clients, job store and engine registry (built once)."""

    settings: ProcessorSettings
    s3: S3Client
    store: JobStore
    engines: EngineRegistry
    chunks: ProcessorInvoker | None = None  # this function, for a large document's chunks
    vl: VlEndpointSubmitter | None = None  # the PaddleOCR-VL endpoint, when deployed
    telemetry: Telemetry | None = None  # business metrics (jobs completed and failed)
    converter: DocumentConverter | None = None  # Office documents to PDF, when deployed
