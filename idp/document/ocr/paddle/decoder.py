"""Installs the space-aware CTC decode (idp.document.ocr.decoding) as the text recognizer's
post-processing in a paddleocr pipeline: the one seam PaddleX offers, for both backends."""

from __future__ import annotations

import logging
from typing import Any

from idp.document.ocr.decoding.ctc import SpaceAwareCtcDecode
from idp.document.ocr.decoding.thresholds import (
    PPOCRV6_THOUSANDS_COMMA_EVIDENCE,
    SPACE_EVIDENCE,
    THOUSANDS_COMMA_EVIDENCE,
)

logger = logging.getLogger(__name__)


def _recognizer(pipeline: Any) -> Any:
    paddlex = pipeline.paddlex_pipeline
    ocr = getattr(paddlex, "general_ocr_pipeline", paddlex)  # PP-StructureV3 nests its OCR
    return ocr.text_rec_model


def thousands_comma_evidence_for(recognition_model: str) -> float:
    """The least p(,) that reads a point in thousands place as a comma, for the recognition
    model of that name: its own calibration (docs/thresholds.md#thousands-commas)."""
    if recognition_model.startswith("PP-OCRv6_"):
        return PPOCRV6_THOUSANDS_COMMA_EVIDENCE
    return THOUSANDS_COMMA_EVIDENCE


def install_space_decoder(
    pipeline: Any,
    *,
    recognition_model: str,
    threshold: float = SPACE_EVIDENCE,
    lookalike_digits: bool = True,
) -> None:
    """Decode the text recognition of a paddleocr pipeline (PaddleOCR or PPStructureV3), whose
    recognizer is `recognition_model`, with `SpaceAwareCtcDecode`. Idempotent."""
    recognizer = _recognizer(pipeline)
    base = recognizer.post_op
    if isinstance(base, SpaceAwareCtcDecode):
        base = base.base
    recognizer.post_op = SpaceAwareCtcDecode(
        base,
        threshold=threshold,
        lookalike_digits=lookalike_digits,
        thousands_comma_evidence=thousands_comma_evidence_for(recognition_model),
    )
    logger.debug("word spaces: p(space) >= %s decoded on %s", threshold, type(recognizer).__name__)


def space_decoder_of(pipeline: Any) -> SpaceAwareCtcDecode | None:
    """The pipeline's `SpaceAwareCtcDecode`, where one is installed."""
    post_op = _recognizer(pipeline).post_op
    return post_op if isinstance(post_op, SpaceAwareCtcDecode) else None
