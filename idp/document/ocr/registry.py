"""The warm engines of a process: built once per model, language and engine options, lazily, and
handed out as Readers with the page steps that run around them."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Mapping
from typing import Final

from idp.contract.errors import UnsupportedModel
from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.document.ocr.engine import OcrEngine
from idp.document.ocr.models.choice import ModelResolver, check_ppocrv6_language
from idp.document.ocr.paddle.engines import (
    DEFAULT_FACTORIES,
    EngineFactory,
    build_orientation_models,
)
from idp.document.ocr.page import Reader
from idp.document.ocr.settings import EngineSettings
from idp.document.ocr.steps.orientation import OrientationModels

logger = logging.getLogger(__name__)

EngineKey = tuple[OcrModel, str, tuple[bool, bool, OcrModel | None]]


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
    # pdf_scale only affects rasterization and page orientation runs around the engine
    # (idp.document.ocr.page), so neither needs an engine of its own.
    flags = (options.use_doc_unwarping, options.use_textline_orientation, options.text_model)
    check_language = _ONE_ENGINE_FOR_ITS_LANGUAGES.get(model)
    if check_language is not None:
        check_language(lang, settings or EngineSettings())
        return (model, _ANY_LANGUAGE, flags)
    return (model, lang, flags)


class EngineRegistry:
    """Builds an engine once per (model, language, engine options), lazily, and keeps it.

    At most `max_engines` stay loaded (least recently used is dropped first): one PP-OCRv5
    engine holds ~1.2 GB, so a 4 GB function keeps one by default. Building an engine takes
    seconds; it holds only that engine's own lock, so a warm engine is handed out meanwhile.
    The orientation models are built once, on the first job that checks orientation, and
    shared by every engine.
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
        self._engines: OrderedDict[EngineKey, OcrEngine] = OrderedDict()
        self._orientation: OrientationModels | None = None
        # _lock guards the table above and is never held while a model loads; one build lock
        # per engine key (and one for the orientation models) makes concurrent first uses
        # build each once.
        self._lock = threading.Lock()
        self._build_locks: defaultdict[object, threading.Lock] = defaultdict(threading.Lock)

    def get(self, model: OcrModel, lang: str, options: JobOptions | None = None) -> Reader:
        """The warm engine for this job, building it on first use, with the page steps the
        job's options ask for: with `use_doc_orientation_classify` (the default) each page is
        read upright (idp.document.ocr.steps.orientation).

        Raises UnsupportedModel (no factory here, e.g. VL on the CPU worker),
        UnsupportedLanguage, or ModelUnavailable.
        """
        options = options or JobOptions()
        engine = self._warm_engine(model, lang, options)
        if not options.use_doc_orientation_classify:
            return Reader(engine)
        return Reader(engine, self._orientation_models())

    def _orientation_models(self) -> OrientationModels:
        if self._orientation is None:
            with self._build_locks[OrientationModels]:
                if self._orientation is None:
                    self._orientation = build_orientation_models(self._resolve, self.settings)
        return self._orientation

    def _warm_engine(self, model: OcrModel, lang: str, options: JobOptions) -> OcrEngine:
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
            warm = factory(lang, options, self._resolve, self.settings)
            with self._lock:
                self._evict(room_for=1)  # other engines built meanwhile
                self._engines[key] = warm
            return warm

    def _kept(self, key: EngineKey) -> OcrEngine | None:
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
