"""Keyword arguments for paddleocr's pipelines: local model dirs, job options, CPU tuning, and the
inference backend they run on."""

from __future__ import annotations

import importlib.util
from typing import Any

from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.document.ocr.models.choice import ModelDirs
from idp.document.ocr.models.onnx_export import ONNX_FILE
from idp.document.ocr.settings import EngineSettings, InferenceBackend


def _model_args(model_dirs: ModelDirs) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for role, (name, path) in model_dirs.items():
        kwargs[f"{role}_model_name"] = name
        kwargs[f"{role}_model_dir"] = str(path)
    return kwargs


def engine_kwargs(
    model: OcrModel,
    model_dirs: ModelDirs,
    options: JobOptions,
    settings: EngineSettings,
    runtime: InferenceBackend = "paddle",
) -> dict[str, Any]:
    """Keyword arguments for paddleocr.PaddleOCR (PP-OCRv5) or paddleocr.PPStructureV3."""
    kwargs: dict[str, Any] = {
        **_model_args(model_dirs),
        "use_doc_orientation_classify": False,  # idp.document.ocr.steps.orientation does it
        "use_doc_unwarping": options.use_doc_unwarping,
        "use_textline_orientation": options.use_textline_orientation,
        "text_det_limit_type": settings.det_limit_type,
        "text_det_limit_side_len": settings.det_limit_side_len,
        "text_recognition_batch_size": settings.rec_batch_for(runtime),
        **settings.runtime_kwargs(runtime),
    }
    if model is OcrModel.PP_STRUCTUREV3:
        kwargs |= {
            "use_table_recognition": settings.use_table_recognition,
            "use_formula_recognition": settings.use_formula_recognition,
            "use_region_detection": settings.use_region_detection,
            "use_seal_recognition": False,
            "use_chart_recognition": False,
        }
    return kwargs


def choose_runtime(settings: EngineSettings, model_dirs: ModelDirs) -> InferenceBackend:
    """The inference backend for an engine over these model dirs (see EngineSettings.runtime)."""
    if settings.runtime != "auto":
        return settings.runtime
    has_onnx = all((path / ONNX_FILE).is_file() for _, path in model_dirs.values())
    if has_onnx and importlib.util.find_spec("onnxruntime") is not None:
        return "onnxruntime"
    return "paddle"
