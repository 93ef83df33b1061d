"""PP-OCRv5 and PP-StructureV3 engines over `paddleocr`, and the registry that keeps them warm.

Engines are built lazily (first job of a model + language), from model directories resolved
through the model cache, and reused by every later invocation of a warm container.
Nothing here imports paddleocr at module import time.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import numpy as np

from idp.contract.errors import EngineFailure, ModelUnavailable, UnsupportedModel
from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.contract.results import EngineInfo
from idp.document.decode import PageImage
from idp.document.ocr.catalogue import DOC_ORIENTATION_MODEL, TEXTLINE_ORIENTATION_MODEL
from idp.document.ocr.engine import OcrEngine, PageContent, failures_on_page
from idp.document.ocr.engine_settings import (
    EngineSettings,
    InferenceBackend,
    ModelDirs,
    choose_runtime,
)
from idp.document.ocr.gutter_split import split_at_gutters
from idp.document.ocr.model_choice import (
    ModelResolver,
    check_ppocrv6_language,
    ocr_model_names,
    ppocrv6_model_names,
    resolve_models,
    structure_model_names,
)
from idp.document.ocr.onnx_export import ONNX_FILE
from idp.document.ocr.orientation import (
    LineOrientationModel,
    OnnxLineOrientation,
    OnnxOrientationClassifier,
    OrientationClassifier,
    OrientationModels,
    OrientedEngine,
    PaddleLineOrientation,
    PaddleOrientationClassifier,
)
from idp.document.ocr.paddle_environment import (
    match_paddlex_log_level,
    prepare_paddle_environment,
    use_libyaml_for_model_configs,
)
from idp.document.ocr.paddle_kwargs import engine_kwargs
from idp.document.ocr.paddle_output import lines_from_ocr, structure_page_content
from idp.document.ocr.reading_order import read_in_order
from idp.document.ocr.word_spacing import install_space_decoder

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

    def _predict(self, page: PageImage) -> Any:
        with failures_on_page(", ".join(self._info.models), page.page):
            results = self._pipeline.predict(_to_bgr(page), **self._predict_options)
        if not results:
            raise EngineFailure(f"the engine returned no result for page {page.page}")
        return results[0]

    @abstractmethod
    def recognize(self, page: PageImage) -> PageContent: ...


class PaddleOcrEngine(_PaddlePipelineEngine):
    """PP-OCRv5 text detection + recognition: lines with 4-point boxes, and their words'."""

    # Word boxes from the recognizer's character columns (result.textract.json's WORD blocks).
    _predict_options: ClassVar[Mapping[str, Any]] = {"return_word_box": True}

    def recognize(self, page: PageImage) -> PageContent:
        result = self._predict(page)
        # A line the detector ran across a column gutter is two lines; PaddleOCR sorts lines by
        # y alone, which reads straight across columns.
        lines = split_at_gutters(lines_from_ocr(result, page.width, page.height))
        ordered = read_in_order(lines, page.width, page.height)
        return PageContent(lines=ordered.lines, blocks=ordered.blocks)

    def read_lines(
        self, lines: Sequence[np.ndarray[Any, np.dtype[np.uint8]]]
    ) -> list[tuple[str, float]]:
        """Text and confidence of each RGB line image: the recognizer alone, no detection
        (the page orientation check reads its sample lines turned this way)."""
        return _read_line_images(self._pipeline.paddlex_pipeline.text_rec_model, lines)


class PPStructureV3Engine(_PaddlePipelineEngine):
    """PP-StructureV3: layout blocks, tables as HTML, reading order and page Markdown."""

    def recognize(self, page: PageImage) -> PageContent:
        result = self._predict(page)
        data = result.json["res"]
        markdown = result.markdown.get("markdown_texts")
        return structure_page_content(data, markdown, page.width, page.height)

    def read_lines(
        self, lines: Sequence[np.ndarray[Any, np.dtype[np.uint8]]]
    ) -> list[tuple[str, float]]:
        """Text and confidence of each RGB line image: its OCR's recognizer alone."""
        ocr = self._pipeline.paddlex_pipeline.general_ocr_pipeline
        return _read_line_images(ocr.text_rec_model, lines)


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


def build_paddle_engine(
    model: OcrModel,
    lang: str,
    options: JobOptions,
    resolve: ModelResolver,
    settings: EngineSettings,
) -> OcrEngine:
    """A ready PP-OCRv5, PP-OCRv6 or PP-StructureV3 engine over the model dirs the job needs."""
    kind = _PIPELINES[model]
    roles = kind.model_names(lang, options, settings)
    model_dirs, runtime = _fetch_for_paddle(roles, resolve, settings)
    paddleocr = importlib.import_module("paddleocr")
    match_paddlex_log_level()
    use_libyaml_for_model_configs()
    pipeline = getattr(paddleocr, kind.library_class)(
        **engine_kwargs(model, model_dirs, options, settings, runtime)
    )
    if settings.word_space_evidence is not None:
        install_space_decoder(pipeline, threshold=settings.word_space_evidence)
    logger.info("%s engine ready: %s on %s", model.value, ", ".join(roles.values()), runtime)
    return kind.engine(pipeline, info=_engine_info(runtime, roles))


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

EngineKey = tuple[OcrModel, str, tuple[bool, bool]]


# Models whose one recognizer reads every language they accept: one engine serves them all, and
# each job's language is checked against the model's list instead.
_ONE_ENGINE_FOR_ITS_LANGUAGES: Final[Mapping[OcrModel, Callable[[str, EngineSettings], None]]] = {
    OcrModel.PP_OCRV6: lambda lang, settings: check_ppocrv6_language(lang, settings.ppocrv6_size),
}
_ANY_LANGUAGE: Final = "*"


def engine_key(
    model: OcrModel, lang: str, options: JobOptions, settings: EngineSettings | None = None
) -> EngineKey:
    """The engine a job runs on. Raises UnsupportedLanguage where the model's one recognizer
    (of the configured size) does not read `lang`."""
    # pdf_scale only affects rasterization and page orientation runs in front of the engine
    # (EngineRegistry.get), so neither needs an engine of its own.
    flags = (options.use_doc_unwarping, options.use_textline_orientation)
    check_language = _ONE_ENGINE_FOR_ITS_LANGUAGES.get(model)
    if check_language is not None:
        check_language(lang, settings or EngineSettings())
        return (model, _ANY_LANGUAGE, flags)
    return (model, lang, flags)


@dataclass
class _WarmEngine:
    engine: OcrEngine
    oriented: OcrEngine | None = None  # the same engine behind the page orientation step


class EngineRegistry:
    """Builds an engine once per (model, language, engine options), lazily, and keeps it.

    At most `max_engines` stay loaded (least recently used is dropped first): one PP-OCRv5
    engine holds ~1.2 GB, so a 4 GB function keeps one by default. Building an engine takes
    seconds; it holds only that engine's own lock, so a warm engine is handed out meanwhile.
    """

    def __init__(
        self,
        *,
        resolve: ModelResolver,
        settings: EngineSettings | None = None,
        factories: Mapping[OcrModel, EngineFactory] | None = None,
        max_engines: int = 1,
    ) -> None:
        self._resolve = resolve
        self.settings = settings or EngineSettings()
        self._factories = dict(factories if factories is not None else DEFAULT_FACTORIES)
        self._max_engines = max(1, max_engines)
        self._engines: OrderedDict[EngineKey, _WarmEngine] = OrderedDict()
        self._orientation: OrientationModels | None = None  # shared by every engine
        # _lock guards the table above and is never held while a model loads; one build lock
        # per engine key makes concurrent first uses of the same engine build it once.
        self._lock = threading.Lock()
        self._build_locks: defaultdict[EngineKey, threading.Lock] = defaultdict(threading.Lock)
        self._orientation_lock = threading.Lock()

    def get(self, model: OcrModel, lang: str, options: JobOptions | None = None) -> OcrEngine:
        """The warm engine for this job, building it on first use.

        With `use_doc_orientation_classify` (the default) the engine reads each page upright
        (idp.document.ocr.orientation). Raises UnsupportedModel (no factory here, e.g. VL on the CPU
        worker), UnsupportedLanguage, or ModelUnavailable.
        """
        options = options or JobOptions()
        warm = self._warm_engine(model, lang, options)
        if not options.use_doc_orientation_classify:
            return warm.engine
        if warm.oriented is not None:
            return warm.oriented
        return self._orient(warm)

    def _orient(self, warm: _WarmEngine) -> OcrEngine:
        with self._orientation_lock:
            if warm.oriented is None:
                if self._orientation is None:
                    self._orientation = build_orientation_models(self._resolve, self.settings)
                warm.oriented = OrientedEngine(warm.engine, self._orientation)
            return warm.oriented

    def _warm_engine(self, model: OcrModel, lang: str, options: JobOptions) -> _WarmEngine:
        key = engine_key(model, lang, options, self.settings)
        with self._lock:
            warm = self._kept(key)
            if warm is not None:
                return warm
            factory = self._factories.get(model)
            if factory is None:
                served = ", ".join(m.value for m in self._factories)
                raise UnsupportedModel(f"model {model.value} is not served here (serves: {served})")
            build_lock = self._build_locks[key]
        with build_lock:
            with self._lock:
                warm = self._kept(key)  # built by another thread while this one waited
                if warm is not None:
                    return warm
                # Drop before building: the memory of the engine dropped is needed for the next.
                self._evict(room_for=1)
            warm = _WarmEngine(factory(lang, options, self._resolve, self.settings))
            with self._lock:
                self._evict(room_for=1)  # other engines built meanwhile
                self._engines[key] = warm
            return warm

    def _kept(self, key: EngineKey) -> _WarmEngine | None:
        warm = self._engines.get(key)
        if warm is not None:
            self._engines.move_to_end(key)
        return warm

    def _evict(self, *, room_for: int) -> None:
        while self._engines and len(self._engines) + room_for > self._max_engines:
            evicted, _ = self._engines.popitem(last=False)
            logger.info("dropping warm engine %s to make room", evicted)

    def loaded(self) -> list[EngineKey]:
        with self._lock:
            return list(self._engines)
