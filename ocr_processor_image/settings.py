"""The OCR processor's settings, read once per container from its environment."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Literal

from pydantic import Field

from idp.aws.settings import FunctionSettings
from idp.contract import names
from idp.contract.env.functions import Env
from idp.contract.env.processor import ProcessorEnv
from idp.contract.names import OcrModel, Service
from idp.contract.topology import STRUCTURE_CHUNK_PAGES


class ProcessorSettings(FunctionSettings):
    jobs_table: str = Field(alias=Env.JOBS_TABLE.value)
    results_bucket: str = Field(alias=Env.RESULTS_BUCKET.value)
    model_cache_bucket: str | None = Field(default=None, alias=Env.MODEL_CACHE_BUCKET.value)
    max_pages: int = Field(default=names.DEFAULT_MAX_PAGES, alias=Env.MAX_PAGES.value)
    max_input_bytes: int = Field(
        default=names.DEFAULT_MAX_INPUT_BYTES, alias=Env.MAX_INPUT_BYTES.value
    )
    allow_hub_download: bool = Field(default=False, alias=Env.ALLOW_HUB_DOWNLOAD.value)
    # Model dirs baked into the image (read-only).
    models_dir: Path | None = Field(default=None, alias=ProcessorEnv.MODELS_DIR.value)
    # Where fetched model dirs are unpacked: this container's disk, not a setting of the stack.
    models_root: Path = Field(default_factory=lambda: Path(tempfile.gettempdir()) / "idp-models")
    cpu_threads: int = Field(default=2, alias=ProcessorEnv.CPU_THREADS.value)
    ppocrv6_size: Literal["tiny", "small", "medium"] = Field(
        default=names.DEFAULT_PPOCRV6_SIZE, alias=Env.PPOCRV6_SIZE.value
    )
    # A document with more pages is fanned out in chunks of this many pages (0: never); a
    # PP-StructureV3 document in chunks of at most STRUCTURE_CHUNK_PAGES (its pages are slower).
    chunk_pages: int = Field(default=names.DEFAULT_CHUNK_PAGES, alias=Env.CHUNK_PAGES.value)
    # This function's own name (Lambda sets AWS_LAMBDA_FUNCTION_NAME): chunks invoke it.
    function_name: str | None = Field(default=None, alias="AWS_LAMBDA_FUNCTION_NAME")
    # The PaddleOCR-VL endpoint this function submits VL jobs to (None: VL disabled).
    vl_endpoint_name: str | None = Field(default=None, alias=Env.VL_ENDPOINT_NAME.value)
    # The Office converter this function calls for DOCX, XLSX, PPTX... (None: not deployed).
    converter_function: str | None = Field(default=None, alias=Env.CONVERTER_FUNCTION.value)
    service: str = Field(default=Service.PROCESSOR.value, alias=Env.POWERTOOLS_SERVICE_NAME.value)

    def chunk_pages_for(self, model: OcrModel) -> int:
        """The pages of a chunk of this model's documents (0: no chunking)."""
        if model is OcrModel.PP_STRUCTUREV3 and self.chunk_pages:
            return min(self.chunk_pages, STRUCTURE_CHUNK_PAGES)
        return self.chunk_pages
