"""PP-OCRv5 and PP-StructureV3 engines over `paddleocr`, and the registry that keeps them warm.

Engines are built lazily (first job of a model + language), from model directories resolved
through the model cache, and reused by every later invocation of a warm container.
Nothing here imports paddleocr at module import time.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np

from idp.errors import (
    ENGINE_FAULTS,
    EngineFailure,
    ModelUnavailable,
    UnsupportedLanguage,
    UnsupportedModel,
)
from idp.jobs import JobOptions
from idp.names import OcrModel
from idp.ocr.engine import OcrEngine, PageContent, PageImage
from idp.ocr.model_cache import ONNX_FILE
from idp.ocr.orientation import (
    DOC_ORIENTATION_MODEL,
    OnnxOrientationClassifier,
    OrientationClassifier,
    OrientedEngine,
    PaddleOrientationClassifier,
)
from idp.results import Block, EngineInfo, Line, Quad

logger = logging.getLogger(__name__)

ModelResolver = Callable[[str], Path]
"""Model name → local model directory (ModelCache.fetch); raises ModelUnavailable."""

ENGINE_NAME: Final = "paddleocr"

# Languages PP-OCRv5's base recognition model reads (Simplified/Traditional Chinese, English,
# Japanese). English uses it too: it reads English well and is the model that runs offline.
_BASE_REC_LANGS: Final = frozenset({"ch", "chinese_cht", "japan", "en"})
# Script families whose codes are also accepted as language codes.
_SCRIPT_CODES: Final = frozenset({"latin", "cyrillic", "arabic", "devanagari", "eslav"})
_SINGLE_SCRIPT_LANGS: Final = frozenset({"korean", "th", "el", "te", "ta"})

# PP-StructureV3 sub-models, as named in paddlex's configs/pipelines/PP-StructureV3.yaml.
LAYOUT_MODEL: Final = "PP-DocLayout_plus-L"
REGION_MODEL: Final = "PP-DocBlockLayout"
TABLE_MODELS: Final = {
    "table_classification": "PP-LCNet_x1_0_table_cls",
    "wired_table_structure_recognition": "SLANeXt_wired",
    "wireless_table_structure_recognition": "SLANet_plus",
    "wired_table_cells_detection": "RT-DETR-L_wired_table_cell_det",
    "wireless_table_cells_detection": "RT-DETR-L_wireless_table_cell_det",
    "table_orientation_classify": DOC_ORIENTATION_MODEL,
}
FORMULA_MODEL: Final = "PP-FormulaNet_plus-L"
TEXTLINE_ORIENTATION_MODEL: Final = "PP-LCNet_x1_0_textline_ori"
DOC_UNWARPING_MODEL: Final = "UVDoc"


@dataclass(frozen=True)
class EngineSettings:
    """How the CPU engines run: deployment tuning, not part of a job's identity.

    Defaults are tuned for a 2-vCPU Lambda-sized CPU (see benchmarks/processor.py).
    """

    variant: Literal["mobile", "server"] = "mobile"
    device: str = "cpu"
    # "auto": ONNX Runtime when it is installed and every model dir carries inference.onnx
    # (same weights, exported by paddle2onnx): it starts without importing paddle and runs
    # PP-OCRv5 faster on CPU. Otherwise Paddle Inference with oneDNN.
    runtime: Literal["auto", "paddle", "onnxruntime"] = "auto"
    cpu_threads: int = 2
    enable_mkldnn: bool = True
    mkldnn_cache_capacity: int = 10
    # Detection input: the longer page side is scaled to at most this many pixels. PaddleOCR's
    # default ("min" 64) runs detection on the full page: 4-5× the work at 144 dpi, same text.
    det_limit_type: Literal["max", "min"] = "max"
    det_limit_side_len: int = 1280
    # None: per runtime (ONNX Runtime 1: wide text lines batched together run slower per
    # line on CPU; Paddle 6, the library default).
    rec_batch_size: int | None = None
    # PP-StructureV3 parts. Formula recognition (PP-FormulaNet_plus-L) is off on CPU: it is
    # by far the slowest sub-model and most business documents carry no formulas.
    use_table_recognition: bool = True
    use_formula_recognition: bool = False
    use_region_detection: bool = True

    def runtime_kwargs(self, runtime: Runtime) -> dict[str, Any]:
        """The library's common arguments (device, inference engine, threads)."""
        if runtime == "onnxruntime":
            return {
                "device": self.device,
                "engine": "onnxruntime",
                "engine_config": {
                    "intra_op_num_threads": self.cpu_threads,
                    "inter_op_num_threads": 1,
                },
            }
        return {
            "device": self.device,
            "cpu_threads": self.cpu_threads,
            "enable_mkldnn": self.enable_mkldnn,
            "mkldnn_cache_capacity": self.mkldnn_cache_capacity,
        }

    def rec_batch_for(self, runtime: Runtime) -> int:
        if self.rec_batch_size is not None:
            return self.rec_batch_size
        return 1 if runtime == "onnxruntime" else 6


Runtime = Literal["paddle", "onnxruntime"]


def choose_runtime(settings: EngineSettings, model_dirs: Mapping[str, tuple[str, Path]]) -> Runtime:
    """The inference runtime for an engine over these model dirs (see EngineSettings.runtime)."""
    if settings.runtime != "auto":
        return settings.runtime
    has_onnx = all((path / ONNX_FILE).is_file() for _, path in model_dirs.values())
    if has_onnx and importlib.util.find_spec("onnxruntime") is not None:
        return "onnxruntime"
    return "paddle"


# -- which models a job needs --------------------------------------------------------------------
def recognition_model_name(lang: str, variant: str = "mobile") -> str:
    """The PP-OCRv5 text recognition model that reads `lang` (PaddleOCR's language groups)."""
    from paddleocr._utils.langs import (
        ARABIC_LANGS,
        CYRILLIC_LANGS,
        DEVANAGARI_LANGS,
        ESLAV_LANGS,
        LATIN_LANGS,
    )

    if lang in _BASE_REC_LANGS:
        return f"PP-OCRv5_{variant}_rec"
    groups: Sequence[tuple[str, Iterable[str]]] = (
        ("latin", LATIN_LANGS),
        ("eslav", ESLAV_LANGS),  # before cyrillic: ru/uk/be have their own model
        ("arabic", ARABIC_LANGS),
        ("cyrillic", CYRILLIC_LANGS),
        ("devanagari", DEVANAGARI_LANGS),
    )
    if lang in _SCRIPT_CODES:
        return f"{lang}_PP-OCRv5_mobile_rec"
    for group, members in groups:
        if lang in members:
            return f"{group}_PP-OCRv5_mobile_rec"
    if lang in _SINGLE_SCRIPT_LANGS:
        return f"{lang}_PP-OCRv5_mobile_rec"
    raise UnsupportedLanguage(
        f"PP-OCRv5 has no recognition model for language {lang!r}; "
        "use e.g. en, ch, fr, de, ru, ar, hi, korean, japan"
    )


def detection_model_name(variant: str = "mobile") -> str:
    return f"PP-OCRv5_{variant}_det"


def _preprocessing_models(options: JobOptions) -> dict[str, str]:
    # Page orientation is not PaddleOCR's step here: idp.ocr.orientation runs it in front of
    # every engine (see EngineRegistry.get), so boxes can be mapped back onto the page.
    roles: dict[str, str] = {}
    if options.use_doc_unwarping:
        roles["doc_unwarping"] = DOC_UNWARPING_MODEL
    if options.use_textline_orientation:
        roles["textline_orientation"] = TEXTLINE_ORIENTATION_MODEL
    return roles


def ocr_model_names(lang: str, options: JobOptions, settings: EngineSettings) -> dict[str, str]:
    """{PaddleOCR role: model name} for a PP-OCRv5 engine."""
    return {
        "text_detection": detection_model_name(settings.variant),
        "text_recognition": recognition_model_name(lang, settings.variant),
        **_preprocessing_models(options),
    }


def structure_model_names(
    lang: str, options: JobOptions, settings: EngineSettings
) -> dict[str, str]:
    """{PPStructureV3 role: model name} for every sub-model the configured pipeline loads."""
    roles = {"layout_detection": LAYOUT_MODEL, **ocr_model_names(lang, options, settings)}
    if settings.use_region_detection:
        roles["region_detection"] = REGION_MODEL
    if settings.use_table_recognition:
        roles.update(TABLE_MODELS)
    if settings.use_formula_recognition:
        roles["formula_recognition"] = FORMULA_MODEL
    return roles


def _model_args(model_dirs: Mapping[str, tuple[str, Path]]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for role, (name, path) in model_dirs.items():
        kwargs[f"{role}_model_name"] = name
        kwargs[f"{role}_model_dir"] = str(path)
    return kwargs


def ocr_engine_kwargs(
    model_dirs: Mapping[str, tuple[str, Path]],
    options: JobOptions,
    settings: EngineSettings,
    runtime: Runtime = "paddle",
) -> dict[str, Any]:
    """Keyword arguments for paddleocr.PaddleOCR: local model dirs, options, CPU tuning."""
    return {
        **_model_args(model_dirs),
        "use_doc_orientation_classify": False,  # idp.ocr.orientation does it
        "use_doc_unwarping": options.use_doc_unwarping,
        "use_textline_orientation": options.use_textline_orientation,
        "text_det_limit_type": settings.det_limit_type,
        "text_det_limit_side_len": settings.det_limit_side_len,
        "text_recognition_batch_size": settings.rec_batch_for(runtime),
        **settings.runtime_kwargs(runtime),
    }


def structure_engine_kwargs(
    model_dirs: Mapping[str, tuple[str, Path]],
    options: JobOptions,
    settings: EngineSettings,
    runtime: Runtime = "paddle",
) -> dict[str, Any]:
    """Keyword arguments for paddleocr.PPStructureV3."""
    return {
        **_model_args(model_dirs),
        "use_doc_orientation_classify": False,  # idp.ocr.orientation does it
        "use_doc_unwarping": options.use_doc_unwarping,
        "use_textline_orientation": options.use_textline_orientation,
        "use_table_recognition": settings.use_table_recognition,
        "use_formula_recognition": settings.use_formula_recognition,
        "use_region_detection": settings.use_region_detection,
        "use_seal_recognition": False,
        "use_chart_recognition": False,
        "text_det_limit_type": settings.det_limit_type,
        "text_det_limit_side_len": settings.det_limit_side_len,
        "text_recognition_batch_size": settings.rec_batch_for(runtime),
        **settings.runtime_kwargs(runtime),
    }


def resolve_models(roles: Mapping[str, str], resolve: ModelResolver) -> dict[str, tuple[str, Path]]:
    """Fetch every model dir; ModelUnavailable names every model that is missing."""
    found: dict[str, tuple[str, Path]] = {}
    missing: list[ModelUnavailable] = []
    names_missing: list[str] = []
    for role, name in roles.items():
        try:
            found[role] = (name, resolve(name))
        except ModelUnavailable as exc:
            missing.append(exc)
            names_missing.append(name)
    if missing:
        if len(missing) == 1:
            raise missing[0]
        raise ModelUnavailable(
            f"models not available: {', '.join(dict.fromkeys(names_missing))}. {missing[0].message}"
        )
    return found


# -- conversion from the library's documented output -------------------------------------------
def _clip(value: float, upper: int) -> float:
    return float(min(max(value, 0.0), float(upper)))


def quad_from_points(points: Any, width: int, height: int) -> Quad:
    """A 4-point box (clockwise from top-left) inside the page, from a polygon or [x1,y1,x2,y2]."""
    array = np.asarray(points, dtype=np.float64)
    if array.ndim == 1 and array.size == 4:
        x1, y1, x2, y2 = array.tolist()
        array = np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]])
    array = array.reshape(-1, 2)
    if array.shape[0] != 4:
        # A polygon with more vertices: use its axis-aligned bounding box.
        x1, y1 = array.min(axis=0).tolist()
        x2, y2 = array.max(axis=0).tolist()
        array = np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]])
    pts = [(_clip(x, width), _clip(y, height)) for x, y in array.tolist()]
    return (pts[0], pts[1], pts[2], pts[3])


def lines_from_ocr(result: Mapping[str, Any], width: int, height: int) -> list[Line]:
    """PaddleOCR's OCRResult (rec_texts, rec_scores, rec_polys) → lines in reading order."""
    texts = list(result.get("rec_texts") or [])
    scores = list(result.get("rec_scores") or [])
    raw_polys = result.get("rec_polys")
    polys = list(raw_polys) if raw_polys is not None else []
    lines: list[Line] = []
    for text, score, poly in zip(texts, scores, polys, strict=False):
        if not str(text).strip():
            continue
        lines.append(
            Line(
                text=str(text),
                box=quad_from_points(poly, width, height),
                confidence=float(min(max(float(score), 0.0), 1.0)),
            )
        )
    return lines


_HTML_LABELS: Final = frozenset({"table"})


def structure_page_content(
    data: Mapping[str, Any], markdown: str | None, width: int, height: int
) -> PageContent:
    """A PP-StructureV3 page result (its documented JSON: parsing_res_list, overall_ocr_res,
    table_res_list) plus its page Markdown → lines, blocks and markdown."""
    ocr = data.get("overall_ocr_res") or {}
    lines = lines_from_ocr(ocr, width, height)
    tables = [t.get("pred_html") for t in data.get("table_res_list") or []]
    blocks: list[Block] = []
    table_index = 0
    for item in data.get("parsing_res_list") or []:
        label = str(item.get("block_label", "text"))
        content = item.get("block_content")
        content = str(content) if content is not None and str(content).strip() else None
        box = quad_from_points(item.get("block_bbox", [0, 0, 0, 0]), width, height)
        if label in _HTML_LABELS:
            html = content
            if html is None and table_index < len(tables):
                html = tables[table_index]
            table_index += 1
            blocks.append(Block(type=label, box=box, html=html))
        else:
            blocks.append(Block(type=label, box=box, text=content))
    return PageContent(lines=lines, blocks=blocks, markdown=markdown or None)


# -- engines ---------------------------------------------------------------------------------------
def prepare_paddle_environment(tmp_root: Path | None = None) -> None:
    """Point PaddleX's caches at a writable place and skip hub connectivity checks.

    Must run before paddleocr/paddlex is first imported (they read these at import).
    """
    root = tmp_root or Path(os.environ.get("TMPDIR", "/tmp"))  # noqa: S108
    os.environ.setdefault("PADDLE_PDX_CACHE_HOME", str(root / "paddlex"))
    os.environ.setdefault("PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK", "True")
    home = os.environ.get("HOME")
    if not home or not os.access(home, os.W_OK):
        os.environ["HOME"] = str(root)


def match_paddlex_log_level() -> None:
    """Let PaddleX log at the function's level (POWERTOOLS_LOG_LEVEL, default INFO).

    PaddleX sets its own logger to INFO when imported, so its coloured "Creating model" lines
    would appear even where the function itself logs warnings only (a quiet local run).
    """
    level = logging.getLevelName(os.environ.get("POWERTOOLS_LOG_LEVEL", "INFO").upper())
    if isinstance(level, int):
        logging.getLogger("paddlex").setLevel(level)


_yaml_patched = False


def use_libyaml_for_model_configs() -> None:
    """Parse model configs (inference.yml) with libyaml's FullLoader instead of pure Python.

    PaddleX reads each model's inference.yml with PyYAML's pure-Python FullLoader; the
    recognition model's file carries its 18k-entry character dictionary and takes ~0.6 s to
    parse (more than once per engine). The C loader builds the same objects ~10× faster.
    """
    global _yaml_patched  # noqa: PLW0603 - patch the library once per process
    if _yaml_patched:
        return
    import yaml  # type: ignore[import-untyped]
    from paddlex.inference.utils.io import readers

    backend = getattr(readers, "YAMLReaderBackend", None)
    loader = getattr(yaml, "CFullLoader", None)
    if backend is None or loader is None:  # another paddlex layout, or PyYAML without libyaml
        return

    def read_file(self: Any, in_path: str, **kwargs: Any) -> Any:
        with open(in_path, encoding="utf-8", **kwargs) as handle:
            return yaml.load(handle, Loader=loader)  # noqa: S506 - FullLoader, as PaddleX uses

    backend.read_file = read_file
    _yaml_patched = True


def _library_version() -> str:
    try:
        return importlib.metadata.version("paddleocr")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _to_bgr(page: PageImage) -> np.ndarray[Any, np.dtype[np.uint8]]:
    # PaddleX treats ndarray input as OpenCV-style BGR.
    return np.ascontiguousarray(page.pixels[:, :, ::-1])


class PaddleOcrEngine:
    """PP-OCRv5 text detection + recognition: lines with 4-point boxes."""

    def __init__(self, pipeline: Any, *, info: EngineInfo) -> None:
        self._pipeline = pipeline
        self._info = info

    @property
    def info(self) -> EngineInfo:
        return self._info

    def recognize(self, page: PageImage) -> PageContent:
        result = _predict(self._pipeline, page, self._info)
        return PageContent(lines=lines_from_ocr(result, page.width, page.height))


class PPStructureV3Engine:
    """PP-StructureV3: layout blocks, tables as HTML, reading order and page Markdown."""

    def __init__(self, pipeline: Any, *, info: EngineInfo) -> None:
        self._pipeline = pipeline
        self._info = info

    @property
    def info(self) -> EngineInfo:
        return self._info

    def recognize(self, page: PageImage) -> PageContent:
        result = _predict(self._pipeline, page, self._info)
        data = result.json["res"]
        markdown = result.markdown.get("markdown_texts")
        return structure_page_content(data, markdown, page.width, page.height)


def _predict(pipeline: Any, page: PageImage, info: EngineInfo) -> Any:
    try:
        results = pipeline.predict(_to_bgr(page))
    except ENGINE_FAULTS:
        raise
    except Exception as exc:  # the library raises bare Exceptions on bad input
        raise EngineFailure(
            f"{', '.join(info.models)} failed on page {page.page}: {type(exc).__name__}: {exc}"
        ) from exc
    if not results:
        raise EngineFailure(f"the engine returned no result for page {page.page}")
    return results[0]


def build_ocr_engine(
    lang: str, options: JobOptions, resolve: ModelResolver, settings: EngineSettings
) -> OcrEngine:
    roles = ocr_model_names(lang, options, settings)
    model_dirs = resolve_models(roles, resolve)
    runtime = choose_runtime(settings, model_dirs)
    prepare_paddle_environment()
    from paddleocr import PaddleOCR

    match_paddlex_log_level()
    use_libyaml_for_model_configs()
    pipeline = PaddleOCR(**ocr_engine_kwargs(model_dirs, options, settings, runtime))
    info = EngineInfo(
        name=f"{ENGINE_NAME}/{runtime}", version=_library_version(), models=list(roles.values())
    )
    logger.info("PP-OCRv5 engine ready: %s on %s", ", ".join(roles.values()), runtime)
    return PaddleOcrEngine(pipeline, info=info)


def build_structure_engine(
    lang: str, options: JobOptions, resolve: ModelResolver, settings: EngineSettings
) -> OcrEngine:
    roles = structure_model_names(lang, options, settings)
    model_dirs = resolve_models(roles, resolve)
    runtime = choose_runtime(settings, model_dirs)
    prepare_paddle_environment()
    from paddleocr import PPStructureV3

    match_paddlex_log_level()
    use_libyaml_for_model_configs()
    pipeline = PPStructureV3(**structure_engine_kwargs(model_dirs, options, settings, runtime))
    models = list(dict.fromkeys(roles.values()))
    info = EngineInfo(name=f"{ENGINE_NAME}/{runtime}", version=_library_version(), models=models)
    return PPStructureV3Engine(pipeline, info=info)


def build_orientation_classifier(
    resolve: ModelResolver, settings: EngineSettings
) -> OrientationClassifier:
    """PaddleOCR's PP-LCNet_x1_0_doc_ori when the model cache has it, else the offline model."""
    try:
        model_dirs = resolve_models({"doc_orientation_classify": DOC_ORIENTATION_MODEL}, resolve)
    except ModelUnavailable as exc:
        logger.info("page orientation: offline model (%s)", exc.message)
        return OnnxOrientationClassifier.offline(threads=settings.cpu_threads)
    runtime = choose_runtime(settings, model_dirs)
    prepare_paddle_environment()
    from paddleocr import DocImgOrientationClassification

    _, model_dir = model_dirs["doc_orientation_classify"]
    predictor = DocImgOrientationClassification(
        model_name=DOC_ORIENTATION_MODEL,
        model_dir=str(model_dir),
        **settings.runtime_kwargs(runtime),
    )
    logger.info("page orientation: %s on %s", DOC_ORIENTATION_MODEL, runtime)
    return PaddleOrientationClassifier(predictor)


EngineFactory = Callable[[str, JobOptions, ModelResolver, EngineSettings], OcrEngine]
"""(lang, options, resolve, settings) → a ready engine."""

DEFAULT_FACTORIES: Final[Mapping[OcrModel, EngineFactory]] = {
    OcrModel.PP_OCRV5: build_ocr_engine,
    OcrModel.PP_STRUCTUREV3: build_structure_engine,
}

EngineKey = tuple[OcrModel, str, tuple[bool, bool]]


def engine_key(model: OcrModel, lang: str, options: JobOptions) -> EngineKey:
    # pdf_scale only affects rasterization and page orientation runs in front of the engine
    # (EngineRegistry.get), so neither needs an engine of its own.
    flags = (options.use_doc_unwarping, options.use_textline_orientation)
    return (model, lang, flags)


@dataclass
class _WarmEngine:
    engine: OcrEngine
    oriented: OcrEngine | None = None  # the same engine behind the page orientation step


class EngineRegistry:
    """Builds an engine once per (model, language, engine options), lazily, and keeps it.

    At most `max_engines` stay loaded (least recently used is dropped first): one PP-OCRv5
    engine holds ~1.2 GB, so a 4 GB function keeps one by default.
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
        self._orientation: OrientationClassifier | None = None  # shared by every engine
        self._lock = threading.Lock()

    def get(self, model: OcrModel, lang: str, options: JobOptions | None = None) -> OcrEngine:
        """The warm engine for this job, building it on first use.

        With `use_doc_orientation_classify` (the default) the engine reads each page upright
        (idp.ocr.orientation). Raises UnsupportedModel (no factory here, e.g. VL on the CPU
        worker), UnsupportedLanguage, or ModelUnavailable.
        """
        options = options or JobOptions()
        with self._lock:
            warm = self._warm_engine(model, lang, options)
            if not options.use_doc_orientation_classify:
                return warm.engine
            if warm.oriented is None:
                if self._orientation is None:
                    self._orientation = build_orientation_classifier(self._resolve, self.settings)
                warm.oriented = OrientedEngine(warm.engine, self._orientation)
            return warm.oriented

    def _warm_engine(self, model: OcrModel, lang: str, options: JobOptions) -> _WarmEngine:
        key = engine_key(model, lang, options)
        warm = self._engines.get(key)
        if warm is not None:
            self._engines.move_to_end(key)
            return warm
        factory = self._factories.get(model)
        if factory is None:
            served = ", ".join(m.value for m in self._factories)
            raise UnsupportedModel(f"model {model.value} is not served here (serves: {served})")
        while len(self._engines) >= self._max_engines:
            evicted, _ = self._engines.popitem(last=False)
            logger.info("dropping warm engine %s to make room", evicted)
        warm = _WarmEngine(factory(lang, options, self._resolve, self.settings))
        self._engines[key] = warm
        return warm

    def loaded(self) -> list[EngineKey]:
        return list(self._engines)
