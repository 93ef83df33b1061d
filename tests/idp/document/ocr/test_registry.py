"""EngineRegistry: engines are built lazily, once per (model, language, options), and kept."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from idp.contract.errors import ModelUnavailable, UnsupportedModel
from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.contract.results import EngineInfo, Line
from idp.document.decode import PageImage
from idp.document.ocr.engine import OcrEngine, PageContent
from idp.document.ocr.models.choice import ModelResolver
from idp.document.ocr.paddle.classifiers import OFFLINE_MODEL_NAME
from idp.document.ocr.registry import EngineRegistry
from idp.document.ocr.settings import EngineSettings


class StaticEngine:
    """A stand-in engine (no OCR): one fixed line per page. For registry/processor plumbing."""

    def __init__(self, lang: str = "en") -> None:
        self.lang = lang

    @property
    def info(self) -> EngineInfo:
        return EngineInfo(name="static", version="0", models=["none"])

    def recognize(self, page: PageImage) -> PageContent:
        box = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0))
        return PageContent(lines=[Line(text="static", box=box, confidence=1.0)])


class CountingFactory:
    def __init__(self) -> None:
        self.built: list[tuple[str, JobOptions]] = []

    def __call__(
        self, lang: str, options: JobOptions, resolve: ModelResolver, settings: EngineSettings
    ) -> OcrEngine:
        self.built.append((lang, options))
        return StaticEngine(lang)


def _empty_cache(name: str) -> Path:
    raise ModelUnavailable(f"model {name} is not available")


def _registry(factory: CountingFactory, max_engines: int = 2) -> EngineRegistry:
    return EngineRegistry(
        resolve=_empty_cache,
        factories={OcrModel.PP_OCRV5: factory},
        max_engines=max_engines,
    )


def test_engine_is_built_on_first_use_and_reused() -> None:
    # GIVEN a registry (nothing built at construction)
    factory = CountingFactory()
    registry = _registry(factory)
    assert factory.built == []
    # WHEN the same model + language is asked for twice, with options that only affect PDFs
    first = registry.get(OcrModel.PP_OCRV5, "en", JobOptions())
    second = registry.get(OcrModel.PP_OCRV5, "en", JobOptions(pdf_scale=1.0))
    # THEN one engine was built and reused
    assert first.engine is second.engine
    assert len(factory.built) == 1


def test_language_and_engine_options_get_their_own_engine() -> None:
    factory = CountingFactory()
    registry = _registry(factory, max_engines=3)
    en = registry.get(OcrModel.PP_OCRV5, "en")
    fr = registry.get(OcrModel.PP_OCRV5, "fr")
    rotated = registry.get(OcrModel.PP_OCRV5, "en", JobOptions(use_textline_orientation=True))
    assert len({id(en.engine), id(fr.engine), id(rotated.engine)}) == 3
    assert len(factory.built) == 3


def test_least_recently_used_engine_is_dropped_beyond_the_limit() -> None:
    # GIVEN room for one engine
    factory = CountingFactory()
    registry = _registry(factory, max_engines=1)
    registry.get(OcrModel.PP_OCRV5, "en")
    # WHEN another language arrives, then the first again
    registry.get(OcrModel.PP_OCRV5, "fr")
    registry.get(OcrModel.PP_OCRV5, "en")
    # THEN only one is loaded at a time, and the first one had to be rebuilt
    assert len(registry.loaded()) == 1
    assert [lang for lang, _ in factory.built] == ["en", "fr", "en"]


def test_orientation_on_and_off_share_one_warm_engine() -> None:
    # GIVEN a registry
    factory = CountingFactory()
    registry = _registry(factory)
    # WHEN a job reads pages upright (the default) and another turns that off
    oriented = registry.get(OcrModel.PP_OCRV5, "en", JobOptions())
    as_given = registry.get(OcrModel.PP_OCRV5, "en", JobOptions(use_doc_orientation_classify=False))
    # THEN one engine was built; the first job's pages also go through the orientation step,
    # whose models are built once
    assert len(factory.built) == 1
    assert oriented.engine is as_given.engine
    assert isinstance(as_given.engine, StaticEngine)
    assert as_given.orientation is None
    assert oriented.info.models == ["none", OFFLINE_MODEL_NAME]
    assert registry.get(OcrModel.PP_OCRV5, "en") == oriented


def test_model_without_a_factory_is_unsupported_here() -> None:
    registry = _registry(CountingFactory())
    with pytest.raises(UnsupportedModel, match="PaddleOCR-VL"):
        registry.get(OcrModel.PADDLEOCR_VL, "en")


AS_GIVEN = JobOptions(use_doc_orientation_classify=False)  # no page orientation step
WAIT_S = 10  # bounds every wait, so a registry that blocks fails instead of hanging


class SlowFactory(CountingFactory):
    """Builds "fr" only once `release` is set: a slow engine build (a large model loading)."""

    def __init__(self) -> None:
        super().__init__()
        self.building = threading.Event()
        self.release = threading.Event()

    def __call__(
        self, lang: str, options: JobOptions, resolve: ModelResolver, settings: EngineSettings
    ) -> OcrEngine:
        if lang == "fr":
            self.building.set()
            self.release.wait(timeout=WAIT_S)
        return super().__call__(lang, options, resolve, settings)


def test_a_slow_build_does_not_hold_up_a_warm_engine() -> None:
    # GIVEN a warm "en" engine, and a "fr" engine whose build is under way and slow
    factory = SlowFactory()
    registry = _registry(factory, max_engines=2)
    warm = registry.get(OcrModel.PP_OCRV5, "en", AS_GIVEN)
    with ThreadPoolExecutor(max_workers=2) as pool:
        french = pool.submit(registry.get, OcrModel.PP_OCRV5, "fr", AS_GIVEN)
        assert factory.building.wait(timeout=WAIT_S)
        # WHEN another job asks for the warm engine meanwhile
        english = pool.submit(registry.get, OcrModel.PP_OCRV5, "en", AS_GIVEN)
        # THEN it gets it while "fr" is still being built
        assert english.result(timeout=WAIT_S).engine is warm.engine
        assert not french.done()
        factory.release.set()
        assert isinstance(french.result(timeout=WAIT_S).engine, StaticEngine)
    assert [lang for lang, _ in factory.built] == ["en", "fr"]


def test_concurrent_first_uses_of_one_engine_build_it_once() -> None:
    # GIVEN a "fr" engine whose build is under way and slow
    factory = SlowFactory()
    registry = _registry(factory)
    with ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(registry.get, OcrModel.PP_OCRV5, "fr", AS_GIVEN)
        assert factory.building.wait(timeout=WAIT_S)
        # WHEN a second job asks for the same engine before it is ready
        second = pool.submit(registry.get, OcrModel.PP_OCRV5, "fr", AS_GIVEN)
        factory.release.set()
        # THEN both get the one engine that was built
        assert first.result(timeout=WAIT_S).engine is second.result(timeout=WAIT_S).engine
    assert len(factory.built) == 1
