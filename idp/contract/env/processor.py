"""Environment-variable keys only the OCR processor image reads."""

from __future__ import annotations

from enum import StrEnum


class ProcessorEnv(StrEnum):
    """Extra environment-variable keys read by the OCR processor (ocr_processor_image)."""

    MODELS_DIR = "IDP_MODELS_DIR"  # unpacked model dirs baked into the image (or .models locally)
    CPU_THREADS = "OCR_CPU_THREADS"  # paddle inference threads; default 2
