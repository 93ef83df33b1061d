"""PP-OCRv5, PP-OCRv6 and PP-StructureV3 engines over `paddleocr`, and the orientation models.

Each is built from model directories resolved through the model cache (idp.document.ocr.registry
builds them once and keeps them warm). Nothing here imports paddleocr at module import time.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import numpy as np

from idp.contract.errors import EngineFailure, ModelUnavailable
from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.contract.quads import bounds
from idp.contract.results import EngineInfo, Line, Quad, Stage
from idp.document.decode import PageImage
from idp.document.ocr.engine import LayoutRegion, OcrEngine, PageContent, failures_on_page
from idp.document.ocr.models.catalogue import DOC_ORIENTATION_MODEL, TEXTLINE_ORIENTATION_MODEL
from idp.document.ocr.models.choice import (
    ModelDirs,
    ModelResolver,
    ocr_model_names,
    ppocrv6_model_names,
    resolve_models,
    structure_model_names,
)
from idp.document.ocr.models.onnx_export import ONNX_FILE
from idp.document.ocr.paddle.classifiers import (
    OnnxLineOrientation,
    OnnxOrientationClassifier,
    PaddleLineOrientation,
    PaddleOrientationClassifier,
)
from idp.document.ocr.paddle.decoder import install_space_decoder, space_decoder_of
from idp.document.ocr.paddle.environment import (
    match_paddlex_log_level,
    only_local_models,
    prepare_paddle_environment,
    use_libyaml_for_model_configs,
)
from idp.document.ocr.paddle.kwargs import choose_runtime, engine_kwargs
from idp.document.ocr.paddle.output import lines_from_ocr, quad_from_points, structure_page_content
from idp.document.ocr.paddle.structure import (
    StructurePlan,
    ocr_runtime,
    plan_structure,
    share_text_reader,
    structure_config,
    substituted_models,
)
from idp.document.ocr.settings import EngineSettings, InferenceBackend
from idp.document.ocr.steps.orientation import (
    LineOrientationModel,
    OrientationClassifier,
    OrientationModels,
)
from idp.document.ocr.timings import time_calls

logger = logging.getLogger(__name__)

ENGINE_NAME: Final = "paddleocr"


def _library_version() -> str:
    try:
        return importlib.metadata.version("paddleocr")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _to_bgr(page: PageImage) -> np.ndarray[Any, np.dtype[np.uint8]]:
    # PaddleX treats ndarray input as OpenCV-style BGR.
    return np.ascontiguousarray(page.pixels[:, :, ::-1])


class _PaddlePipelineEngine(ABC):
    """A paddleocr pipeline that reads one page per call."""

    def __init__(self, pipeline: Any, *, info: EngineInfo) -> None:
        self._pipeline = pipeline
        self._info = info

    @property
    def info(self) -> EngineInfo:
        return self._info

    # Keyword arguments of every predict() call.
    _predict_options: ClassVar[Mapping[str, Any]] = {}

    def _options(self) -> Mapping[str, Any]:
        return self._predict_options

    def _predict(self, page: PageImage) -> Any:
        with failures_on_page(", ".join(self._info.models), page.page):
            results = self._pipeline.predict(_to_bgr(page), **self._options())
        if not results:
            raise EngineFailure(f"the engine returned no result for page {page.page}")
        return results[0]

    @abstractmethod
    def recognize(self, page: PageImage) -> PageContent: ...


class PaddleOcrEngine(_PaddlePipelineEngine):
    """PP-OCRv5 text detection + recognition: lines with 4-point boxes, and their words'."""

    # Word boxes from the recognizer's character columns (result.textract.json's WORD blocks).
    _predict_options: ClassVar[Mapping[str, Any]] = {"return_word_box": True}

    # The detector's input limit (EngineSettings.det_limit_side_len): the page path reads a tall
    # page in tiles of about this height, so its text keeps its size (steps.tiles).
    detector_side: int = EngineSettings.det_limit_side_len

    def recognize(self, page: PageImage) -> PageContent:
        # The image read whole, lines in the detector's order: idp.document.ocr.page cuts a tall
        # page into tiles first, and splits gutters and orders lines after.
        decoder = space_decoder_of(self._pipeline)
        if decoder is None:
            result = self._predict(page)
            return PageContent(lines=lines_from_ocr(result, page.width, page.height))
        with decoder.token_confidences() as confidences:
            result = self._predict(page)
        lines = lines_from_ocr(result, page.width, page.height, token_confidences=confidences)
        return PageContent(lines=lines)

    def read_lines(
        self, lines: Sequence[np.ndarray[Any, np.dtype[np.uint8]]]
    ) -> list[tuple[str, float]]:
        """Text and confidence of each RGB line image: the recognizer alone, no detection
        (the page orientation check reads its sample lines turned this way)."""
        return _read_line_images(self._pipeline.paddlex_pipeline.text_rec_model, lines)


class PPStructureV3Engine(_PaddlePipelineEngine):
    """PP-StructureV3: typed layout blocks in reading order, tables with their cells, and the
    page's Markdown; each page records which of its stages ran (StructurePlan.stages)."""

    def __init__(
        self, pipeline: Any, *, info: EngineInfo, plan: StructurePlan | None = None
    ) -> None:
        super().__init__(pipeline, info=info)
        self._plan = plan

    def _options(self) -> Mapping[str, Any]:
        return self._plan.predict_options if self._plan is not None else {}

    def recognize(self, page: PageImage) -> PageContent:
        result = self._predict(page)
        content = structure_page_content(result.json["res"], page.width, page.height)
        if self._plan is not None:
            content.stages = [*self._plan.stages, *content.stages]
        return content

    def read_lines(
        self, lines: Sequence[np.ndarray[Any, np.dtype[np.uint8]]]
    ) -> list[tuple[str, float]]:
        """Text and confidence of each RGB line image: its OCR's recognizer alone."""
        ocr = self._pipeline.paddlex_pipeline.general_ocr_pipeline
        return _read_line_images(ocr.text_rec_model, lines)

    def detect_layout(self, page: PageImage) -> list[LayoutRegion]:
        """The page's regions from the pipeline's own layout model (or its substitute), with the
        thresholds, NMS and merge modes the pipeline configured it with."""
        model = self._pipeline.paddlex_pipeline.layout_det_model
        with failures_on_page(self.layout_model, page.page):
            (result,) = list(model([_to_bgr(page)]))
        return [
            LayoutRegion(
                label=str(box["label"]),
                box=quad_from_points(box["coordinate"], page.width, page.height),
                score=float(box["score"]),
            )
            for box in result["boxes"]
        ]

    def read_region(self, page: PageImage, box: Quad) -> list[Line]:
        """The text lines in `box` (the pipeline's own detection and recognition), in the
        page's pixels."""
        left, top, right, bottom = (round(v) for v in bounds(box))
        left, top = max(left, 0), max(top, 0)
        right, bottom = min(right, page.width), min(bottom, page.height)
        if right - left < 2 or bottom - top < 2:
            return []
        crop = PageImage(page=page.page, pixels=page.pixels[top:bottom, left:right])
        ocr = self._pipeline.paddlex_pipeline.general_ocr_pipeline
        with failures_on_page(", ".join(self._info.models), page.page):
            (result,) = list(ocr([_to_bgr(crop)]))
        return [
            line.model_copy(update={"box": _moved(line.box, left, top), "words": []})
            for line in lines_from_ocr(result, crop.width, crop.height)
        ]

    @property
    def layout_model(self) -> str:
        stage = next((s for s in self.layout_stages if s.model), None)
        return stage.model if stage is not None and stage.model else "layout model"

    @property
    def layout_stages(self) -> list[Stage]:
        if self._plan is None:
            return []
        return [stage for stage in self._plan.stages if stage.name == "layout"]

    @property
    def region_text_model(self) -> str | None:
        if self._plan is None:
            return None
        return next((stage.model for stage in self._plan.stages if stage.name == "ocr"), None)


def _moved(quad: Quad, dx: float, dy: float) -> Quad:
    a, b, c, d = ((x + dx, y + dy) for x, y in quad)
    return (a, b, c, d)


def _read_line_images(
    recognizer: Any, lines: Sequence[np.ndarray[Any, np.dtype[np.uint8]]]
) -> list[tuple[str, float]]:
    if not lines:
        return []
    # PaddleX treats ndarray input as OpenCV-style BGR.
    results = recognizer([np.ascontiguousarray(line[:, :, ::-1]) for line in lines])
    return [(str(result["rec_text"]), float(result["rec_score"])) for result in results]


def _fetch_for_paddle(
    roles: Mapping[str, str], resolve: ModelResolver, settings: EngineSettings
) -> tuple[ModelDirs, InferenceBackend]:
    """The models' local dirs and the backend to run them on; the process made ready for
    paddleocr's import."""
    model_dirs = resolve_models(roles, resolve)
    runtime = choose_runtime(settings, model_dirs)
    prepare_paddle_environment()
    return model_dirs, runtime


def _engine_info(runtime: InferenceBackend, roles: Mapping[str, str]) -> EngineInfo:
    models = list(dict.fromkeys(roles.values()))
    return EngineInfo(name=f"{ENGINE_NAME}/{runtime}", version=_library_version(), models=models)


@dataclass(frozen=True)
class _PaddlePipeline:
    """One of paddleocr's pipelines: the models it needs and the engine that runs it."""

    model_names: Callable[[str, JobOptions, EngineSettings], dict[str, str]]
    library_class: str  # in paddleocr
    engine: type[_PaddlePipelineEngine]


_PIPELINES: Final[Mapping[OcrModel, _PaddlePipeline]] = {
    OcrModel.PP_OCRV5: _PaddlePipeline(ocr_model_names, "PaddleOCR", PaddleOcrEngine),
    OcrModel.PP_OCRV6: _PaddlePipeline(ppocrv6_model_names, "PaddleOCR", PaddleOcrEngine),
    OcrModel.PP_STRUCTUREV3: _PaddlePipeline(
        structure_model_names, "PPStructureV3", PPStructureV3Engine
    ),
}


def _build_structure_engine(
    lang: str, options: JobOptions, resolve: ModelResolver, settings: EngineSettings
) -> OcrEngine:
    """PP-StructureV3 over every sub-model the cache has, substitutes for the rest
    (idp.document.ocr.paddle.structure)."""
    plan = plan_structure(structure_model_names(lang, options, settings), resolve, settings)
    runtime = ocr_runtime(plan, settings)
    prepare_paddle_environment()
    paddleocr = importlib.import_module("paddleocr")
    match_paddlex_log_level()
    use_libyaml_for_model_configs()
    kwargs = engine_kwargs(OcrModel.PP_STRUCTUREV3, plan.model_dirs, options, settings, "paddle")
    kwargs["use_region_detection"] = plan.use_region_detection
    with only_local_models(), substituted_models(plan, settings):
        pipeline = paddleocr.PPStructureV3(
            paddlex_config=structure_config(plan, settings, runtime), **kwargs
        )
    share_text_reader(pipeline)
    _time_engine_steps(pipeline)
    if settings.word_space_evidence is not None:
        install_space_decoder(
            pipeline,
            recognition_model=structure_model_names(lang, options, settings)["text_recognition"],
            threshold=settings.word_space_evidence,
            lookalike_digits=settings.lookalike_digits,
        )
    models = plan.models()
    logger.info("PP-StructureV3 engine ready: %s; text on %s", ", ".join(models), runtime)
    info = EngineInfo(name=f"{ENGINE_NAME}/{runtime}", version=_library_version(), models=models)
    return PPStructureV3Engine(pipeline, info=info, plan=plan)


# The models inside a PaddleX pipeline whose batches are timed as steps of their own.
_ENGINE_STEPS: Final = (
    ("text_det_model", "detection"),
    ("text_rec_model", "recognition"),
    ("textline_orientation_model", "line_orientation"),
    ("layout_det_model", "layout"),
)


def _time_engine_steps(pipeline: Any) -> None:
    """Time the pipeline's own models (idp.document.ocr.timings): each batch PaddleX hands one
    (`BasePredictor.process`) is a step named after it."""
    paddlex = pipeline.paddlex_pipeline
    for wrapped in (paddlex, getattr(paddlex, "general_ocr_pipeline", None)):
        owner = getattr(wrapped, "_pipeline", wrapped)  # PaddleX's parallel-inference wrapper
        for attribute, name in _ENGINE_STEPS:
            model = getattr(owner, attribute, None) if owner is not None else None
            if model is not None and callable(getattr(model, "process", None)):
                time_calls(model, "process", name)


def build_paddle_engine(
    model: OcrModel,
    lang: str,
    options: JobOptions,
    resolve: ModelResolver,
    settings: EngineSettings,
) -> OcrEngine:
    """A ready PP-OCRv5, PP-OCRv6 or PP-StructureV3 engine over the model dirs the job needs."""
    if model is OcrModel.PP_STRUCTUREV3:
        return _build_structure_engine(lang, options, resolve, settings)
    kind = _PIPELINES[model]
    roles = kind.model_names(lang, options, settings)
    model_dirs, runtime = _fetch_for_paddle(roles, resolve, settings)
    paddleocr = importlib.import_module("paddleocr")
    match_paddlex_log_level()
    use_libyaml_for_model_configs()
    with only_local_models():
        pipeline = getattr(paddleocr, kind.library_class)(
            **engine_kwargs(model, model_dirs, options, settings, runtime)
        )
    if settings.word_space_evidence is not None:
        install_space_decoder(
            pipeline,
            recognition_model=roles["text_recognition"],
            threshold=settings.word_space_evidence,
            lookalike_digits=settings.lookalike_digits,
        )
    _time_engine_steps(pipeline)
    logger.info("%s engine ready: %s on %s", model.value, ", ".join(roles.values()), runtime)
    engine = kind.engine(pipeline, info=_engine_info(runtime, roles))
    if isinstance(engine, PaddleOcrEngine) and settings.det_limit_type == "max":
        engine.detector_side = settings.det_limit_side_len
    return engine


def build_ocr_engine(
    lang: str, options: JobOptions, resolve: ModelResolver, settings: EngineSettings
) -> OcrEngine:
    return build_paddle_engine(OcrModel.PP_OCRV5, lang, options, resolve, settings)


def build_ppocrv6_engine(
    lang: str, options: JobOptions, resolve: ModelResolver, settings: EngineSettings
) -> OcrEngine:
    return build_paddle_engine(OcrModel.PP_OCRV6, lang, options, resolve, settings)


def build_structure_engine(
    lang: str, options: JobOptions, resolve: ModelResolver, settings: EngineSettings
) -> OcrEngine:
    return build_paddle_engine(OcrModel.PP_STRUCTUREV3, lang, options, resolve, settings)


def build_orientation_classifier(
    resolve: ModelResolver, settings: EngineSettings
) -> OrientationClassifier:
    """PaddleOCR's PP-LCNet_x1_0_doc_ori when the model cache has it, else the offline model."""
    roles = {"doc_orientation_classify": DOC_ORIENTATION_MODEL}
    try:
        model_dirs, runtime = _fetch_for_paddle(roles, resolve, settings)
    except ModelUnavailable as exc:
        logger.info("page orientation: offline model (%s)", exc.message)
        return OnnxOrientationClassifier.offline(threads=settings.cpu_threads)
    from paddleocr import DocImgOrientationClassification

    _, model_dir = model_dirs["doc_orientation_classify"]
    predictor = DocImgOrientationClassification(
        model_name=DOC_ORIENTATION_MODEL,
        model_dir=str(model_dir),
        **settings.runtime_kwargs(runtime),
    )
    logger.info("page orientation: %s on %s", DOC_ORIENTATION_MODEL, runtime)
    return PaddleOrientationClassifier(predictor)


def build_line_orientation_model(
    resolve: ModelResolver, settings: EngineSettings
) -> LineOrientationModel | None:
    """PP-LCNet_x1_0_textline_ori from the model cache (the offline weights carry it as ONNX);
    None where it cannot be had: the orientation check then rests on recognition alone."""
    roles = {"textline_orientation": TEXTLINE_ORIENTATION_MODEL}
    try:
        model_dirs, runtime = _fetch_for_paddle(roles, resolve, settings)
    except ModelUnavailable as exc:
        logger.warning("page orientation checked without line votes: %s", exc.message)
        return None
    _, model_dir = model_dirs["textline_orientation"]
    logger.info("line orientation: %s on %s", TEXTLINE_ORIENTATION_MODEL, runtime)
    if runtime == "onnxruntime":
        return OnnxLineOrientation(model_dir / ONNX_FILE, threads=settings.cpu_threads)
    from paddleocr import TextLineOrientationClassification

    predictor = TextLineOrientationClassification(
        model_name=TEXTLINE_ORIENTATION_MODEL,
        model_dir=str(model_dir),
        **settings.runtime_kwargs(runtime),
    )
    return PaddleLineOrientation(predictor)


def build_orientation_models(resolve: ModelResolver, settings: EngineSettings) -> OrientationModels:
    """The page classifier that proposes a rotation and the line model that checks it."""
    return OrientationModels(
        classifier=build_orientation_classifier(resolve, settings),
        lines=build_line_orientation_model(resolve, settings),
    )


EngineFactory = Callable[[str, JobOptions, ModelResolver, EngineSettings], OcrEngine]
"""(lang, options, resolve, settings) → a ready engine."""

DEFAULT_FACTORIES: Final[Mapping[OcrModel, EngineFactory]] = {
    OcrModel.PP_OCRV5: build_ocr_engine,
    OcrModel.PP_OCRV6: build_ppocrv6_engine,
    OcrModel.PP_STRUCTUREV3: build_structure_engine,
}
