"""Engine selection and pooling for the VL server: PaddleOCR-VL, or the PP-OCRv5 substitute.

The server only sees `LoadedEngines`: a pool of OcrEngine instances (a request holds one for the
whole document) and, for PaddleOCR-VL, the supervised vLLM server all instances share.
"""

from __future__ import annotations

import logging
import queue
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from idp.contract.env.processor import ProcessorEnv
from idp.contract.env.vl import VL_ENGINE_SUBSTITUTE_PPOCRV5
from idp.contract.errors import EngineFailure, ModelUnavailable
from idp.contract.jobs import JobOptions
from idp.contract.languages import DEFAULT_LANGUAGE
from idp.contract.results import EngineInfo
from idp.contract.timestamps import ms
from idp.document import sample_page
from idp.document.decode import PageImage
from idp.document.ocr.engine import MultiPageEngine, OcrEngine, PageContent
from idp.document.ocr.models.cache import ModelCache
from idp.document.ocr.page import recognize
from sagemaker_container.paddleocr_vl import (
    PaddleOcrVlEngine,
    VlEngineConfig,
    pipeline_models,
)
from sagemaker_container.settings import ServerSettings
from sagemaker_container.vlm_server import (
    VlmServerSpec,
    VlmServerSupervisor,
    paddlex_chat_template,
)
from sagemaker_container.weights import model_cache_for, resolve_vl_weights

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from mypy_boto3_s3 import S3Client

logger = logging.getLogger(__name__)

SUBSTITUTE_ENGINE_NAME = "substitute:PP-OCRv5"
# The VLM server's settings (VlmServerSettings) that its spec's command line takes as they are.
_COMMAND_LINE_SETTINGS: Final = {
    "command",
    "port",
    "gpu_memory_utilization",
    "max_num_seqs",
    "extra_args",
}


class PhaseReporter(Protocol):
    def __call__(self, phase: str, /) -> None: ...


class EngineBusy(RuntimeError):
    """No engine instance became free within the wait allowed."""


class EnginePool:
    """A fixed set of engine instances; each request leases one for its whole document."""

    def __init__(self, engines: Sequence[OcrEngine]) -> None:
        if not engines:
            raise ValueError("an engine pool needs at least one engine")
        self.engines = tuple(engines)
        self._free: queue.Queue[OcrEngine] = queue.Queue()
        for engine in self.engines:
            self._free.put(engine)

    @property
    def size(self) -> int:
        return len(self.engines)

    @property
    def info(self) -> EngineInfo:
        return self.engines[0].info

    @contextmanager
    def lease(self, *, timeout_s: float | None = None) -> Iterator[OcrEngine]:
        try:
            engine = self._free.get(timeout=timeout_s)
        except queue.Empty:
            raise EngineBusy(f"no engine free within {timeout_s} s") from None
        try:
            yield engine
        finally:
            self._free.put(engine)


@dataclass
class LoadedEngines:
    """What the server holds once loading finished."""

    pool: EnginePool
    supervisor: VlmServerSupervisor | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def info(self) -> EngineInfo:
        return self.pool.info

    @property
    def healthy(self) -> bool:
        return self.supervisor is None or self.supervisor.ready

    def close(self) -> None:
        for engine in self.pool.engines:
            close = getattr(engine, "close", None)
            if callable(close):
                close()
        if self.supervisor is not None:
            self.supervisor.stop()


class SubstituteEngine:
    """The real PP-OCRv5 engine standing in for PaddleOCR-VL where no GPU or VL weights exist.

    It recognizes text lines only (no layout blocks, no Markdown) and says so in its EngineInfo.
    """

    def __init__(self, inner: OcrEngine) -> None:
        self._inner = inner
        inner_info = inner.info
        self._info = EngineInfo(
            name=SUBSTITUTE_ENGINE_NAME,
            version=inner_info.version,
            models=list(inner_info.models),
            substitute=True,
        )

    @property
    def info(self) -> EngineInfo:
        return self._info

    def recognize(self, page: PageImage) -> PageContent:
        # Through the page path's recognize step: a tall page in tiles, as the processor reads it.
        return recognize(self._inner, page)

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if callable(close):
            close()


class PinnedEngine:
    """An engine built on, and only ever run on, one dedicated thread.

    Paddle Inference keeps per-thread state (oneDNN kernel caches): a predictor created on one
    thread and run on another fails with `RuntimeError: std::exception` (measured here with
    PP-OCRv5 on CPU as soon as a page of a new size arrives). Requests run on arbitrary worker
    threads, so each engine instance gets a thread of its own and requests hand pages to it.
    """

    def __init__(self, factory: Callable[[], OcrEngine], *, name: str) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        try:
            self._engine = self._executor.submit(factory).result()
        except BaseException:
            self._executor.shutdown(wait=False)
            raise

    @property
    def info(self) -> EngineInfo:
        return self._engine.info

    def recognize(self, page: PageImage) -> PageContent:
        return self._executor.submit(self._engine.recognize, page).result()

    def recognize_pages(self, pages: Sequence[PageImage]) -> list[PageContent]:
        """Several pages in one call when the engine takes them (their work overlaps)."""
        engine = self._engine
        if isinstance(engine, MultiPageEngine):
            return self._executor.submit(engine.recognize_pages, pages).result()
        return [self.recognize(page) for page in pages]

    def close(self) -> None:
        close = getattr(self._engine, "close", None)
        if callable(close):
            self._executor.submit(close).result()
        self._executor.shutdown(wait=True)


def _pinned(factories: Sequence[Callable[[], OcrEngine]]) -> list[OcrEngine]:
    engines: list[OcrEngine] = []
    try:
        for index, factory in enumerate(factories):
            engines.append(PinnedEngine(factory, name=f"engine-{index}"))
    except BaseException:
        for engine in engines:
            close = getattr(engine, "close", None)
            if callable(close):
                close()
        raise
    return engines


SubstituteFactory = Callable[[ServerSettings], OcrEngine]


def build_engines(
    settings: ServerSettings,
    *,
    s3: S3Client | None,
    report: PhaseReporter,
    substitute_factory: SubstituteFactory | None = None,
) -> LoadedEngines:
    if settings.engine == VL_ENGINE_SUBSTITUTE_PPOCRV5:
        report("building-engine")
        factory = substitute_factory or build_substitute_engine
        engines = _pinned([lambda: SubstituteEngine(factory(settings))] * settings.engine_instances)
        return LoadedEngines(pool=EnginePool(engines), details={"engine": settings.engine})
    return build_paddleocr_vl_engines(settings, s3=s3, report=report)


def build_substitute_engine(settings: ServerSettings) -> OcrEngine:
    """The real PP-OCRv5 engine (idp.document.ocr.paddle.engines) on the offline weights, on CPU."""
    from idp.document.ocr.paddle.engines import build_ocr_engine
    from idp.document.ocr.settings import EngineSettings

    models_dir = settings.substitute_models_dir
    if models_dir is None:
        raise ModelUnavailable(
            f"the {VL_ENGINE_SUBSTITUTE_PPOCRV5} engine needs the PP-OCRv5 weights: set "
            f"{ProcessorEnv.MODELS_DIR.value} to the directory holding "
            "PP-OCRv5_mobile_det and PP-OCRv5_mobile_rec"
        )
    cache = ModelCache(
        local_root=Path(tempfile.gettempdir()) / "idp-models",
        search_roots=(models_dir,),
        allow_hub_download=False,
    )
    # The substitute reads with PP-OCRv5's base model whatever the job's language (VL itself
    # is multilingual without per-language models), so one engine serves every job.
    return build_ocr_engine(DEFAULT_LANGUAGE, JobOptions(), cache.fetch, EngineSettings())


def build_paddleocr_vl_engines(
    settings: ServerSettings,
    *,
    s3: S3Client | None,
    report: PhaseReporter,
    engine_factory: Callable[[VlEngineConfig], OcrEngine] = PaddleOcrVlEngine,
) -> LoadedEngines:
    models = pipeline_models(settings.pipeline_version)
    report("resolving-weights")
    weights = resolve_vl_weights(models, cache=model_cache_for(settings, s3), settings=settings)
    supervisor: VlmServerSupervisor | None = None
    server = settings.vlm_server
    if server.url:
        server_url = server.url
    else:
        report("starting-vlm-server")
        spec = VlmServerSpec(
            model_dir=weights.vlm_dir,
            served_model_name=models.vlm_model,
            chat_template=paddlex_chat_template(models.vlm_model),
            **server.model_dump(include=_COMMAND_LINE_SETTINGS),
        )
        supervisor = VlmServerSupervisor(
            spec, startup_timeout_s=server.startup_timeout_s, max_restarts=server.max_restarts
        )
        supervisor.start()
        server_url = spec.base_url
    report("building-engine")
    config = VlEngineConfig(
        models=models,
        layout_model_dir=weights.layout_dir,
        server_url=server_url,
        region_concurrency=settings.region_concurrency,
        device=settings.device,
    )
    try:
        engines = _pinned([partial(engine_factory, config)] * settings.engine_instances)
    except BaseException:
        if supervisor is not None:
            supervisor.stop()
        raise
    return LoadedEngines(
        pool=EnginePool(engines),
        supervisor=supervisor,
        details={
            "engine": settings.engine,
            "pipeline_version": models.version,
            "vlm_server_url": server_url,
            "layout_model_dir": str(weights.layout_dir),
            "vlm_model_dir": str(weights.vlm_dir),
        },
    )


def warm_up_page() -> PageImage:
    """A generated page of known text: the first inference pays compile/allocation costs here."""
    import numpy as np

    pixels: npt.NDArray[np.uint8] = np.asarray(sample_page.warm_up_page(), dtype=np.uint8)
    return PageImage(page=1, pixels=pixels)


def recognized_text(content: PageContent) -> str:
    """All text an engine returned for a page: its lines, and its blocks whatever their label
    (a layout model may call a short strip of text a header, which is not a body line)."""
    parts = [line.text for line in content.lines]
    parts += [block.text or block.markdown or block.html or "" for block in content.blocks]
    return "\n".join(part.strip() for part in parts if part and part.strip())


def warm_up(engines: LoadedEngines) -> dict[str, float]:
    """One inference per engine instance; EngineFailure if an instance recognizes no text at
    all. What the text is labelled (body, header, title) is the layout model's call, not a
    sign of health."""
    page = warm_up_page()
    timings: dict[str, float] = {}
    for index, engine in enumerate(engines.pool.engines):
        started = time.perf_counter()
        content = engine.recognize(page)
        timings[f"warmup_{index}_ms"] = ms(time.perf_counter() - started)
        if not recognized_text(content):
            raise EngineFailure(
                f"warm-up inference on engine instance {index} recognized no text on a page of "
                "known text; the engine is not working"
            )
    return timings
