"""The PaddleOCR-VL engine without weights: construction arguments and output conversion.

Construction is checked against the installed paddleocr itself: its real `PaddleOCRVL.__init__`
validates and maps our arguments into the PaddleX pipeline config; only the final step that
would load models is replaced. Output conversion uses the library's real result class, filled
with the fields its documentation describes (label, bbox, content per block).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from idp.contract.errors import EngineFailure
from idp.document.decode import PageImage
from sagemaker_container.paddleocr_vl import (
    PaddleOcrVlEngine,
    VlEngineConfig,
    page_content_from_result,
    pipeline_kwargs,
    pipeline_models,
)

SERVER_URL = "http://127.0.0.1:8118/v1"


@pytest.fixture(autouse=True)
def _paddlex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PADDLE_PDX_CACHE_HOME", str(tmp_path / "paddlex"))
    monkeypatch.setenv("PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK", "True")


def config_for(tmp_path: Path, version: str = "v1.6") -> VlEngineConfig:
    return VlEngineConfig(
        models=pipeline_models(version),
        layout_model_dir=tmp_path / "PP-DocLayoutV3",
        server_url=SERVER_URL,
        region_concurrency=48,
        device="gpu:0",
    )


@pytest.fixture
def captured_configs(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Run PaddleOCRVL's real __init__ but stop before it loads models (no weights here)."""
    from paddleocr import PaddleOCRVL

    captured: list[dict[str, Any]] = []

    def capture(self: Any) -> object:
        captured.append(dict(self._merged_paddlex_config))
        return object()

    monkeypatch.setattr(PaddleOCRVL, "_create_paddlex_pipeline", capture)
    return captured


def result_with(blocks: list[tuple[str, list[int], str]]) -> Any:
    """A real PaddleOCRVLResult holding the documented per-block fields."""
    from paddlex.inference.pipelines.paddleocr_vl.result import (
        PaddleOCRVLBlock,
        PaddleOCRVLResult,
    )

    return PaddleOCRVLResult(
        {
            "input_path": None,
            "page_index": None,
            "page_count": None,
            "width": 800,
            "height": 1000,
            "model_settings": {
                "use_doc_preprocessor": False,
                "use_layout_detection": True,
                "format_block_content": False,
                "markdown_ignore_labels": ["header", "footer", "number"],
            },
            "parsing_res_list": [PaddleOCRVLBlock(*block) for block in blocks],
            "layout_det_res": {"boxes": []},
            "imgs_in_doc": [],
            "doc_preprocessor_res": None,
        }
    )


SAMPLE_BLOCKS: list[tuple[str, list[int], str]] = [
    ("header", [40, 10, 760, 40], "ACME Corp — internal"),
    ("doc_title", [40, 60, 760, 120], "Quarterly Report"),
    ("text", [40, 140, 760, 260], "Revenue grew by 12 percent.\nCosts fell slightly."),
    (
        "table",
        [40, 280, 760, 480],
        "<table><tr><td>Quarter</td><td>Revenue</td></tr>"
        "<tr><td>Q1</td><td>10 &amp; 2</td></tr></table>",
    ),
    ("display_formula", [40, 500, 760, 560], "E = mc^2"),
    ("footer", [40, 960, 760, 990], "Page 1 of 3"),
]


def test_construction_arguments_configure_the_vllm_server_backend(
    tmp_path: Path, captured_configs: list[dict[str, Any]]
) -> None:
    # GIVEN the engine config the container builds
    config = config_for(tmp_path)
    # WHEN the real PaddleOCRVL wrapper is constructed with our arguments
    engine = PaddleOcrVlEngine(config, version="3.7.0", pipeline_factory=None)
    # THEN the library accepted them and the pipeline talks to our vLLM server
    (merged,) = captured_configs
    assert merged["pipeline_name"] == "PaddleOCR-VL-1.6"
    vl = merged["SubModules"]["VLRecognition"]
    assert vl["model_name"] == "PaddleOCR-VL-1.6-0.9B"
    assert vl["genai_config"]["backend"] == "vllm-server"
    assert vl["genai_config"]["server_url"] == SERVER_URL
    assert vl["genai_config"]["max_concurrency"] == 48
    assert vl["genai_config"]["client_kwargs"]["model_name"] == "PaddleOCR-VL-1.6-0.9B"
    layout = merged["SubModules"]["LayoutDetection"]
    assert layout["model_name"] == "PP-DocLayoutV3"
    assert layout["model_dir"] == str(tmp_path / "PP-DocLayoutV3")
    assert merged["use_doc_preprocessor"] is False
    # AND the engine names the models it serves, as the deployed (non-substitute) engine
    assert engine.info.name == "paddleocr"
    assert engine.info.models == ["PP-DocLayoutV3", "PaddleOCR-VL-1.6-0.9B"]
    assert engine.info.substitute is False


def test_kwargs_cover_every_pipeline_version(tmp_path: Path) -> None:
    # GIVEN each pipeline version PaddleOCR 3.7 offers
    for version, layout, vlm in (
        ("v1", "PP-DocLayoutV2", "PaddleOCR-VL-0.9B"),
        ("v1.5", "PP-DocLayoutV3", "PaddleOCR-VL-1.5-0.9B"),
        ("v1.6", "PP-DocLayoutV3", "PaddleOCR-VL-1.6-0.9B"),
    ):
        # WHEN the construction arguments are built
        kwargs = pipeline_kwargs(config_for(tmp_path, version))
        # THEN they name that version's layout model and VLM
        assert kwargs["pipeline_version"] == version
        assert kwargs["layout_detection_model_name"] == layout
        assert kwargs["vl_rec_model_name"] == vlm
        assert kwargs["vl_rec_backend"] == "vllm-server"
    with pytest.raises(ValueError, match="unknown PaddleOCR-VL pipeline version"):
        pipeline_models("v9")


def test_documented_output_becomes_blocks_lines_and_markdown() -> None:
    # GIVEN a PaddleOCR-VL page result with furniture, title, text, table and formula
    result = result_with(SAMPLE_BLOCKS)
    # WHEN it is converted into our page content
    content = page_content_from_result(result)
    # THEN every region is a typed block with its label, box and content in the right field
    assert [b.label for b in content.blocks] == [label for label, _, _ in SAMPLE_BLOCKS]
    assert [b.type for b in content.blocks][:5] == ["header", "title", "text", "table", "formula"]
    title = content.blocks[1]
    assert title.text == "Quarterly Report"
    assert title.box == ((40.0, 60.0), (760.0, 60.0), (760.0, 120.0), (40.0, 120.0))
    table = content.blocks[3]
    assert table.html is not None
    assert table.html.startswith("<table>")
    assert [(c.row, c.column, c.text) for c in table.cells][-1] == (2, 2, "10 & 2")
    assert content.blocks[4].markdown == "E = mc^2"
    # AND the body (not header/footer) reads as lines in reading order
    assert [line.text for line in content.lines] == [
        "Quarterly Report",
        "Revenue grew by 12 percent.\nCosts fell slightly.",
        "Quarter Revenue\nQ1 10 & 2",
        "E = mc^2",
    ]
    assert all(line.confidence == 1.0 for line in content.lines)
    # AND the page Markdown is the library's own rendering
    assert content.markdown is not None
    assert content.markdown.startswith("# Quarterly Report")
    assert "Page 1 of 3" not in content.markdown


def test_recognize_sends_bgr_pixels_and_converts_each_page(tmp_path: Path) -> None:
    # GIVEN an engine whose pipeline records what it receives (the library needs weights)
    received: list[Any] = []

    class RecordingPipeline:
        def __init__(self, **kwargs: Any) -> None:
            self.kwargs = kwargs

        def predict(self, images: Any) -> list[Any]:
            received.append(images)
            batch = images if isinstance(images, list) else [images]
            return [result_with(SAMPLE_BLOCKS) for _ in batch]

    engine = PaddleOcrVlEngine(
        config_for(tmp_path), pipeline_factory=RecordingPipeline, version="3.7.0"
    )
    pixels = np.zeros((20, 30, 3), dtype=np.uint8)
    pixels[..., 0] = 255  # pure red in RGB
    # WHEN one page, then two pages together, are recognized
    single = engine.recognize(PageImage(page=1, pixels=pixels))
    pair = engine.recognize_pages([PageImage(1, pixels), PageImage(2, pixels)])
    # THEN the pipeline got BGR images (red lands in the last channel), pages in one call
    assert received[0].shape == (20, 30, 3)
    assert received[0][0, 0].tolist() == [0, 0, 255]
    assert isinstance(received[1], list)
    assert len(received[1]) == 2
    assert single.lines[0].text == "Quarterly Report"
    assert len(pair) == 2


def test_a_pipeline_error_becomes_an_engine_failure(tmp_path: Path) -> None:
    # GIVEN a pipeline that fails (e.g. the vLLM server refused the connection)
    class FailingPipeline:
        def __init__(self, **kwargs: Any) -> None:
            pass

        def predict(self, images: Any) -> list[Any]:
            raise ConnectionError("Connection refused")

    engine = PaddleOcrVlEngine(config_for(tmp_path), pipeline_factory=FailingPipeline, version="x")
    # WHEN a page is recognized THEN the error is typed and says what happened
    with pytest.raises(EngineFailure, match="Connection refused"):
        engine.recognize(PageImage(page=1, pixels=np.zeros((8, 8, 3), dtype=np.uint8)))


@pytest.mark.parametrize("pinned", [True, False])
def test_every_model_the_real_pipeline_creates_has_its_directory_or_a_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pinned: bool
) -> None:
    # GIVEN PaddleOCRVL's real construction, stopped where PaddleX would build its sub-models:
    # each is handed to BasePipeline.create_model, a STAND-IN recording what it is given
    from paddleocr import PaddleOCRVL
    from paddlex.inference.pipelines.base import BasePipeline

    from idp.contract.errors import ModelUnavailable

    created: list[str] = []
    monkeypatch.setattr(
        BasePipeline, "create_model", lambda _p, sub, **_kw: created.append(sub["model_name"])
    )

    def build(self: Any) -> object:
        for sub in self._merged_paddlex_config["SubModules"].values():
            BasePipeline.create_model(object(), sub)
        return object()

    monkeypatch.setattr(PaddleOCRVL, "_create_paddlex_pipeline", build)
    config = config_for(tmp_path)
    if not pinned:
        config = VlEngineConfig(
            models=config.models, layout_model_dir=None, server_url=SERVER_URL, device="cpu"
        )

    # WHEN the engine is built THEN the layout model comes from its directory and the VLM from
    # the vLLM server; without the layout's directory the engine refuses to start, naming it
    if pinned:
        PaddleOcrVlEngine(config, version="3.7.0")
        assert created == [config.models.layout_model, config.models.vlm_model]
    else:
        with pytest.raises(ModelUnavailable, match=f"model {config.models.layout_model} has"):
            PaddleOcrVlEngine(config, version="3.7.0")
