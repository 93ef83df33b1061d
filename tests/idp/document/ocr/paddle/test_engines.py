"""Engines up to the model boundary: which models a job needs, where their dirs come from,
how the libraries are constructed, and conversion of their documented output.

PP-StructureV3's weights are not available offline, so its pipeline is checked through the
library's own config merge (predictor creation, which loads weights, is the boundary) and its
result conversion through a fixture shaped like the documented JSON result.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml  # type: ignore[import-untyped]

from idp.contract.errors import EngineFailure, ModelUnavailable, UnsupportedLanguage
from idp.contract.jobs import JobOptions
from idp.contract.languages import (
    PPOCRV6_LANGUAGES,
    SUPPORTED_LANGUAGES,
    default_text_model,
)
from idp.contract.names import OcrModel
from idp.contract.results import EngineInfo
from idp.document.decode import PageImage
from idp.document.ocr.models.cache import ModelCache
from idp.document.ocr.models.choice import (
    ocr_model_names,
    ppocrv6_languages,
    ppocrv6_model_names,
    recognition_model_name,
    resolve_models,
    structure_model_names,
)
from idp.document.ocr.models.manifest import ModelManifest, ModelPin
from idp.document.ocr.paddle.engines import PPStructureV3Engine
from idp.document.ocr.paddle.kwargs import choose_runtime, engine_kwargs
from idp.document.ocr.paddle.output import structure_page_content
from idp.document.ocr.registry import engine_key
from idp.document.ocr.settings import EngineSettings
from tests.processor_account import CACHE_BUCKET, Aws

SETTINGS = EngineSettings()


def _paddlex_pipeline_config(name: str) -> dict[str, Any]:
    spec = importlib.util.find_spec("paddlex")
    assert spec is not None
    assert spec.origin is not None
    path = Path(spec.origin).parent / "configs" / "pipelines" / f"{name}.yaml"
    loaded: dict[str, Any] = yaml.safe_load(path.read_text())
    return loaded


def _model_names_in(config: Any) -> Iterator[str]:
    if isinstance(config, dict):
        if isinstance(config.get("model_name"), str):
            yield config["model_name"]
        for value in config.values():
            yield from _model_names_in(value)


@pytest.mark.parametrize(
    ("lang", "model"),
    [
        ("en", "PP-OCRv5_mobile_rec"),
        ("ch", "PP-OCRv5_mobile_rec"),
        ("japan", "PP-OCRv5_mobile_rec"),
        ("fr", "latin_PP-OCRv5_mobile_rec"),
        ("de", "latin_PP-OCRv5_mobile_rec"),
        ("ru", "eslav_PP-OCRv5_mobile_rec"),
        ("bg", "cyrillic_PP-OCRv5_mobile_rec"),
        ("ar", "arabic_PP-OCRv5_mobile_rec"),
        ("hi", "devanagari_PP-OCRv5_mobile_rec"),
        ("korean", "korean_PP-OCRv5_mobile_rec"),
        ("th", "th_PP-OCRv5_mobile_rec"),
    ],
)
def test_language_selects_its_recognition_model(lang: str, model: str) -> None:
    assert recognition_model_name(lang) == model


def test_every_supported_language_maps_to_a_model_or_a_clear_error() -> None:
    unsupported: list[str] = []
    for lang in sorted(SUPPORTED_LANGUAGES):
        try:
            model = recognition_model_name(lang)
        except UnsupportedLanguage as exc:
            message = exc.message
            unsupported.append(lang)
        else:
            message = lang
            assert model.endswith("_rec")
        assert lang in message
    # Only scripts PP-OCRv5 has no model for (e.g. Kannada, Georgian) are refused.
    assert len(unsupported) < 10, unsupported


def test_a_job_that_names_no_model_reads_with_ppocrv6_unless_only_ppocrv5_reads_its_language() -> (
    None
):
    # GIVEN every language a job may ask for
    for lang in sorted(SUPPORTED_LANGUAGES):
        model = default_text_model(lang)
        # THEN PP-OCRv6 reads it where its recognizer knows the script, PP-OCRv5 elsewhere
        if model is OcrModel.PP_OCRV6:
            assert ppocrv6_model_names(lang, JobOptions(), SETTINGS)
        else:
            assert model is OcrModel.PP_OCRV5
            with pytest.raises(UnsupportedLanguage):
                ppocrv6_model_names(lang, JobOptions(), SETTINGS)
    assert default_text_model("en") is default_text_model("fr") is OcrModel.PP_OCRV6
    assert default_text_model("ru") is default_text_model("korean") is OcrModel.PP_OCRV5


def test_ppocrv6_reads_its_fifty_languages_with_one_model_of_the_configured_size() -> None:
    # GIVEN the contract's list of PP-OCRv6 languages: PaddleOCR's own, which a client without
    # paddleocr cannot import
    from paddleocr._pipelines.ocr import _PPOCRV6_LANGS

    languages = ppocrv6_languages()
    assert languages == PPOCRV6_LANGUAGES == frozenset(_PPOCRV6_LANGS)
    assert {"ch", "chinese_cht", "en", "japan", "fr", "de", "es", "pl", "tr", "cs"} <= languages
    assert 45 <= len(languages) <= 60
    # THEN each is read by PP-OCRv6's one recognizer, small unless the stack says otherwise
    for lang in languages:
        roles = ppocrv6_model_names(lang, JobOptions(), SETTINGS)
        assert roles == {
            "text_detection": "PP-OCRv6_small_det",
            "text_recognition": "PP-OCRv6_small_rec",
        }
    medium = EngineSettings(ppocrv6_size="medium")
    assert ppocrv6_model_names("fr", JobOptions(), medium)["text_recognition"] == (
        "PP-OCRv6_medium_rec"
    )


@pytest.mark.parametrize(
    ("lang", "named"),
    [
        ("ru", "eslav_PP-OCRv5_mobile_rec"),
        ("korean", "korean_PP-OCRv5_mobile_rec"),
        ("ar", "arabic"),
    ],
)
def test_a_language_ppocrv6_does_not_read_names_the_model_that_does(lang: str, named: str) -> None:
    with pytest.raises(UnsupportedLanguage) as refused:
        ppocrv6_model_names(lang, JobOptions(), SETTINGS)
    assert "PP-OCRv5" in refused.value.message
    assert named in refused.value.message


def test_one_ppocrv6_engine_serves_all_its_languages_and_refuses_others() -> None:
    # GIVEN the engine keys of PP-OCRv6 jobs in three languages, and of PP-OCRv5 jobs
    options = JobOptions()
    keys = {engine_key(OcrModel.PP_OCRV6, lang, options) for lang in ("en", "fr", "japan")}
    # THEN one engine serves them (one recognizer reads them all); PP-OCRv5 keeps one per language
    assert len(keys) == 1
    assert engine_key(OcrModel.PP_OCRV5, "en", options) != engine_key(
        OcrModel.PP_OCRV5, "fr", options
    )
    # AND a language PP-OCRv6 does not read is refused before any engine is looked up
    with pytest.raises(UnsupportedLanguage):
        engine_key(OcrModel.PP_OCRV6, "ru", options)
    # AND the tiny size, whose dictionary has no kana, refuses Japanese and Traditional Chinese
    tiny = EngineSettings(ppocrv6_size="tiny")
    assert engine_key(OcrModel.PP_OCRV6, "fr", options, tiny) in keys
    for lang in ("japan", "chinese_cht"):
        with pytest.raises(UnsupportedLanguage, match="PP-OCRv6 small and medium read it"):
            engine_key(OcrModel.PP_OCRV6, lang, options, tiny)
    assert ppocrv6_languages("tiny") == ppocrv6_languages() - {"japan", "chinese_cht"}
    assert OcrModel.parse("ppocrv6") is OcrModel.PP_OCRV6
    assert OcrModel.PP_OCRV6.reads_text_lines
    assert not OcrModel.PP_OCRV6.yields_markdown


def test_structure_needs_layout_region_ocr_and_table_models_from_the_paddlex_config() -> None:
    # GIVEN the default job options
    roles = structure_model_names("en", JobOptions(), SETTINGS)
    # THEN every model is one PP-StructureV3's own pipeline config names (or a text-line model
    # of the offline ones: PP-OCRv6 small reads the regions by default)
    official = set(_model_names_in(_paddlex_pipeline_config("PP-StructureV3")))
    for name in roles.values():
        assert name in official or name.startswith(("PP-OCRv5_", "PP-OCRv6_")), name
    assert roles["layout_detection"] == "PP-DocLayout_plus-L"
    assert roles["region_detection"] == "PP-DocBlockLayout"
    assert roles["wireless_table_structure_recognition"] == "SLANet_plus"
    assert roles["text_detection"] == "PP-OCRv6_small_det"
    # AND the options that are off by default bring no model
    assert "textline_orientation" not in roles
    assert "doc_unwarping" not in roles
    assert "formula_recognition" not in roles


def test_unwarping_and_textline_options_add_their_models() -> None:
    options = JobOptions(use_doc_unwarping=True, use_textline_orientation=True)
    roles = ocr_model_names("en", options, SETTINGS)
    assert roles["doc_unwarping"] == "UVDoc"
    assert roles["textline_orientation"] == "PP-LCNet_x1_0_textline_ori"


def test_page_orientation_is_not_left_to_paddleocr() -> None:
    # GIVEN the default options, which read every page upright
    options = JobOptions()
    assert options.use_doc_orientation_classify
    # WHEN the engines' PaddleOCR arguments are made
    roles = ocr_model_names("en", options, SETTINGS)
    dirs = {role: (name, Path("/models") / name) for role, name in roles.items()}
    # THEN PaddleOCR does not turn pages itself (steps/orientation.py does, around the engine,
    # so boxes can be mapped back onto the page as uploaded)
    assert "doc_orientation_classify" not in roles
    for model in (OcrModel.PP_OCRV5, OcrModel.PP_STRUCTUREV3):
        kwargs = engine_kwargs(model, dirs, options, SETTINGS)
        assert kwargs["use_doc_orientation_classify"] is False, model


def _fake_model_dir(root: Path, name: str) -> Path:
    path = root / name
    path.mkdir(parents=True)
    # Placeholder weights without a Paddle program: nothing to export to ONNX.
    (path / "inference.yml").write_text(f"Global:\n  model_name: {name}\n")
    (path / "inference.pdiparams").write_bytes(b"\0" * 64)
    return path


def test_all_structure_sub_models_resolve_through_the_s3_model_cache(
    aws: Aws, tmp_path: Path
) -> None:
    # GIVEN every PP-StructureV3 sub-model imported into the cache bucket (placeholder weights:
    # the real ones need a connected machine)
    roles = structure_model_names("en", JobOptions(), SETTINGS)
    # (and pinned, as `idp models import-dir` pins them)
    seeding = ModelCache(s3=aws.s3, bucket=CACHE_BUCKET)
    pins = [
        ModelPin(
            name, "test", seeding.import_dir(name, _fake_model_dir(tmp_path / "src", name)).sha256
        )
        for name in set(roles.values())
    ]
    cache = ModelCache(
        s3=aws.s3, bucket=CACHE_BUCKET, local_root=tmp_path / "root", manifest=ModelManifest(pins)
    )
    # WHEN they are resolved
    dirs = resolve_models(roles, cache.fetch)
    # THEN each role has its own unpacked dir under the local root
    assert set(dirs) == set(roles)
    for role, (name, path) in dirs.items():
        assert path == tmp_path / "root" / name, role
        assert (path / "inference.pdiparams").is_file()


def test_missing_structure_models_are_all_named(aws: Aws, tmp_path: Path) -> None:
    roles = structure_model_names("en", JobOptions(), SETTINGS)
    cache = ModelCache(s3=aws.s3, bucket=CACHE_BUCKET, local_root=tmp_path)
    with pytest.raises(ModelUnavailable) as raised:
        resolve_models(roles, cache.fetch)
    for name in ("PP-DocLayout_plus-L", "SLANet_plus", "PP-OCRv6_small_rec"):
        assert name in raised.value.message


_DISABLED_WHEN = {
    ".SubModules.ChartRecognition": "use_chart_recognition",
    ".SubModules.RegionDetection": "use_region_detection",
    ".SubPipelines.DocPreprocessor": "use_doc_preprocessor",
    ".SubPipelines.SealRecognition": "use_seal_recognition",
    ".SubPipelines.FormulaRecognition": "use_formula_recognition",
    ".SubPipelines.TableRecognition": "use_table_recognition",
    "TextLineOrientation": "use_textline_orientation",
}


def _loaded_sub_models(config: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """path → (model_name, model_dir) of every sub-module the merged config will load."""
    flags = {
        **config,
        "use_textline_orientation": config["SubPipelines"]["GeneralOCR"].get(
            "use_textline_orientation"
        ),
    }
    found: dict[str, tuple[str, Any]] = {}

    def walk(node: Any, path: str) -> None:
        if not isinstance(node, dict):
            return
        if any(part in path and not flags.get(flag, True) for part, flag in _DISABLED_WHEN.items()):
            return
        if "model_name" in node:
            found[path] = (node["model_name"], node.get("model_dir"))
        for key, value in node.items():
            walk(value, f"{path}.{key}")

    walk(config, "")
    return found


def test_structure_engine_construction_points_every_loaded_sub_model_at_a_local_dir() -> None:
    from paddleocr import PPStructureV3
    from paddleocr._pipelines.base import PaddleXPipelineWrapper

    # GIVEN resolved dirs for every required model
    roles = structure_model_names("en", JobOptions(), SETTINGS)
    dirs = {role: (name, Path("/tmp/idp-models") / name) for role, name in roles.items()}
    kwargs = engine_kwargs(OcrModel.PP_STRUCTUREV3, dirs, JobOptions(), SETTINGS)
    # WHEN PPStructureV3 is constructed with them (predictor creation, which loads the
    # weights, is stubbed: it is the model boundary)
    with mock.patch.object(PaddleXPipelineWrapper, "_create_paddlex_pipeline", return_value=None):
        engine = PPStructureV3(**kwargs)
    config = engine._merged_paddlex_config
    # THEN every sub-model the pipeline will load has a local dir (nothing goes to the hub),
    # under the model name that dir holds
    loaded = _loaded_sub_models(config)
    assert loaded
    for path, (name, model_dir) in loaded.items():
        assert model_dir == str(Path("/tmp/idp-models") / name), path
    assert config["use_formula_recognition"] is False
    assert config["use_seal_recognition"] is False
    assert config["use_doc_preprocessor"] is False
    text_det = config["SubPipelines"]["GeneralOCR"]["SubModules"]["TextDetection"]
    assert text_det["limit_type"] == SETTINGS.det_limit_type


def test_ocr_engine_construction_uses_local_dirs_and_options() -> None:
    from paddleocr import PaddleOCR
    from paddleocr._pipelines.base import PaddleXPipelineWrapper

    options = JobOptions(use_textline_orientation=True)
    roles = ocr_model_names("fr", options, SETTINGS)
    dirs = {role: (name, Path("/models") / name) for role, name in roles.items()}
    with mock.patch.object(PaddleXPipelineWrapper, "_create_paddlex_pipeline", return_value=None):
        engine = PaddleOCR(**engine_kwargs(OcrModel.PP_OCRV5, dirs, options, SETTINGS))
    config = engine._merged_paddlex_config
    modules = config["SubModules"]
    assert modules["TextRecognition"]["model_name"] == "latin_PP-OCRv5_mobile_rec"
    assert modules["TextRecognition"]["model_dir"] == "/models/latin_PP-OCRv5_mobile_rec"
    assert modules["TextLineOrientation"]["model_dir"] == "/models/PP-LCNet_x1_0_textline_ori"
    assert config["use_textline_orientation"] is True
    assert config["use_doc_preprocessor"] is False


def test_runtime_is_onnxruntime_only_when_every_model_has_an_onnx_export(tmp_path: Path) -> None:
    det = _fake_model_dir(tmp_path, "PP-OCRv5_mobile_det")
    rec = _fake_model_dir(tmp_path, "PP-OCRv5_mobile_rec")
    dirs = {"text_detection": (det.name, det), "text_recognition": (rec.name, rec)}
    (det / "inference.onnx").write_bytes(b"onnx")
    assert choose_runtime(SETTINGS, dirs) == "paddle"
    (rec / "inference.onnx").write_bytes(b"onnx")
    assert choose_runtime(SETTINGS, dirs) == "onnxruntime"
    assert choose_runtime(EngineSettings(runtime="paddle"), dirs) == "paddle"


def test_onnxruntime_engine_arguments_pin_threads_and_batch() -> None:
    dirs = {"text_detection": ("PP-OCRv5_mobile_det", Path("/m/PP-OCRv5_mobile_det"))}
    kwargs = engine_kwargs(OcrModel.PP_OCRV5, dirs, JobOptions(), SETTINGS, "onnxruntime")
    assert kwargs["engine"] == "onnxruntime"
    assert kwargs["device"] == "cpu"
    assert kwargs["engine_config"]["intra_op_num_threads"] == SETTINGS.cpu_threads
    assert kwargs["text_recognition_batch_size"] == 1
    assert "enable_mkldnn" not in kwargs


def _parsed_block(
    block_id: int, label: str, content: str, bbox: list[int], *, order: int | None
) -> dict[str, Any]:
    """One entry of a PP-StructureV3 result's parsing_res_list, as PaddleOCR documents it."""
    return {
        "block_label": label,
        "block_content": content,
        "block_bbox": bbox,
        "block_id": block_id,
        "block_order": order,
    }


TABLE_HTML = "<html><body><table><tr><td>Q1</td><td>10</td></tr></table></body></html>"
# A PP-StructureV3 page result in the shape PaddleOCR documents for `result.json["res"]`.
STRUCTURE_RESULT: dict[str, Any] = {
    "input_path": None,
    "page_index": None,
    "width": 1000,
    "height": 800,
    "model_settings": {"use_table_recognition": True, "use_formula_recognition": False},
    "parsing_res_list": [
        _parsed_block(0, "doc_title", "Quarterly Report", [100, 40, 600, 90], order=1),
        _parsed_block(1, "text", "Revenue grew by 12 percent.", [100, 120, 900, 160], order=2),
        _parsed_block(2, "table", TABLE_HTML, [100, 200, 900, 400], order=3),
        _parsed_block(3, "image", "", [100, 420, 1200, 700], order=None),
    ],
    "layout_det_res": {
        "boxes": [
            {"cls_id": 10, "label": "doc_title", "score": 0.97, "coordinate": [100, 40, 600, 90]}
        ]
    },
    "overall_ocr_res": {
        "rec_texts": ["Quarterly Report", "Revenue grew by 12 percent.", " "],
        "rec_scores": [0.99, 0.97, 0.2],
        "rec_polys": [
            [[100, 40], [600, 40], [600, 90], [100, 90]],
            [[100, 120], [900, 120], [900, 160], [100, 160]],
            [[0, 0], [1, 0], [1, 1], [0, 1]],
        ],
        "rec_boxes": [[100, 40, 600, 90], [100, 120, 900, 160], [0, 0, 1, 1]],
    },
    "table_res_list": [
        {
            "cell_box_list": [[100, 200, 500, 400], [500, 200, 900, 400]],
            "pred_html": TABLE_HTML,
            "table_ocr_pred": {"rec_texts": ["Q1", "10"]},
        }
    ],
}
STRUCTURE_MARKDOWN = "# Quarterly Report\n\nRevenue grew by 12 percent.\n\n| Q1 | 10 |\n|---|---|"


def test_structure_result_becomes_typed_blocks_cells_and_markdown() -> None:
    # WHEN the documented result shape is converted
    content = structure_page_content(STRUCTURE_RESULT, 1000, 800)
    # THEN lines keep text, 4-point boxes and scores (blank lines dropped), in the regions' order
    assert [line.text for line in content.lines] == [
        "Quarterly Report",
        "Revenue grew by 12 percent.",
    ]
    assert content.lines[0].box == ((100, 40), (600, 40), (600, 90), (100, 90))
    # AND blocks are typed, keep the layout's label and reading order, and name their lines
    assert [(b.type, b.label) for b in content.blocks] == [
        ("title", "doc_title"),
        ("text", "text"),
        ("table", "table"),
        ("figure", "image"),
    ]
    assert [b.lines for b in content.blocks] == [[0], [1], [], []]
    assert content.blocks[0].text == "Quarterly Report"
    # AND the table carries its HTML and its cells, each on its cell box
    table = content.blocks[2]
    assert table.html is not None
    assert "<td>Q1</td>" in table.html
    assert table.text is None
    assert [(c.row, c.column, c.text) for c in table.cells] == [(1, 1, "Q1"), (1, 2, "10")]
    assert table.cells[1].box == ((500, 200), (900, 200), (900, 400), (500, 400))
    # AND boxes are clipped to the page (the image block overflowed to x=1200)
    assert content.blocks[3].box[1] == (1000.0, 420.0)
    # AND the page's Markdown is written from its blocks: a heading, a paragraph, a table
    assert content.markdown == STRUCTURE_MARKDOWN
    assert content.layout_regions == 1


def test_each_table_block_gets_its_own_table_result_whatever_order_paddlex_lists_them() -> None:
    # GIVEN a page of two tables whose results PaddleX lists in the order the layout model found
    # them: the lower table first
    upper = "<html><body><table><tr><td>upper</td></tr></table></body></html>"
    lower = "<html><body><table><tr><td>lower</td><td>2</td></tr></table></body></html>"
    result = {
        "parsing_res_list": [
            _parsed_block(0, "table", upper, [100, 100, 900, 300], order=1),
            _parsed_block(1, "table", "", [100, 400, 900, 600], order=2),
        ],
        "overall_ocr_res": {"rec_texts": [], "rec_scores": [], "rec_polys": [], "rec_boxes": []},
        "table_res_list": [
            {
                "cell_box_list": [[100, 400, 500, 600], [500, 400, 900, 600]],
                "pred_html": lower,
            },
            {"cell_box_list": [[100, 100, 900, 300]], "pred_html": upper},
        ],
    }

    # WHEN the page is converted
    content = structure_page_content(result, 1000, 800)

    # THEN the upper block has the result whose HTML it holds, the lower one the result whose
    # cells lie in its box (its content was not the HTML)
    assert [[c.text for c in block.cells] for block in content.blocks] == [
        ["upper"],
        ["lower", "2"],
    ]


def test_two_tables_of_the_same_html_keep_their_own_cell_boxes() -> None:
    # GIVEN two empty forms' grids of one HTML, their results listed lower one first
    grid = "<html><body><table><tr><td></td><td></td></tr></table></body></html>"
    result = {
        "parsing_res_list": [
            _parsed_block(0, "table", grid, [100, 100, 900, 200], order=1),
            _parsed_block(1, "table", grid, [100, 600, 900, 700], order=2),
        ],
        "overall_ocr_res": {"rec_texts": [], "rec_scores": [], "rec_polys": [], "rec_boxes": []},
        "table_res_list": [
            {"cell_box_list": [[100, 600, 500, 700], [500, 600, 900, 700]], "pred_html": grid},
            {"cell_box_list": [[100, 100, 500, 200], [500, 100, 900, 200]], "pred_html": grid},
        ],
    }
    # WHEN the page is converted
    content = structure_page_content(result, 1000, 800)
    # THEN each block's cells lie in its own box
    tops = [[cell.box[0][1] for cell in block.cells if cell.box] for block in content.blocks]
    assert tops == [[100, 100], [600, 600]]


class _DocumentedStructureResult:
    """Stand-in for PaddleX's LayoutParsingResultV2 (its weights cannot be had offline):
    the two documented accessors the engine reads, `.json` and `.markdown`."""

    def __init__(self) -> None:
        self.json = {"res": STRUCTURE_RESULT}
        # PaddleX's own Markdown keeps tables as HTML; the job writes its own from the blocks.
        self.markdown = {"markdown_texts": "# Quarterly Report\n\n<table>...</table>"}


class _StructurePipeline:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.inputs: list[Any] = []

    def predict(self, image: Any) -> list[Any]:
        self.inputs.append(image)
        if self.fail:
            raise RuntimeError("(PreconditionNotMet) tensor shape mismatch")
        return [_DocumentedStructureResult()]


def _page() -> PageImage:
    import numpy as np

    pixels = np.zeros((800, 1000, 3), dtype=np.uint8)
    pixels[:, :, 0] = 255  # pure red in RGB
    return PageImage(page=2, pixels=pixels)


def test_structure_engine_feeds_bgr_and_converts_the_result() -> None:
    pipeline = _StructurePipeline()
    info = EngineInfo(name="paddleocr", version="3.7.0", models=["PP-DocLayout_plus-L"])
    engine = PPStructureV3Engine(pipeline, info=info)
    content = engine.recognize(_page())
    assert content.markdown == STRUCTURE_MARKDOWN
    assert len(content.blocks) == 4
    # PaddleX reads ndarrays as OpenCV BGR: red must arrive in the last channel
    assert pipeline.inputs[0][0, 0].tolist() == [0, 0, 255]


def test_engine_error_on_a_page_becomes_engine_failure() -> None:
    info = EngineInfo(name="paddleocr", version="3.7.0", models=["PP-DocLayout_plus-L"])
    engine = PPStructureV3Engine(_StructurePipeline(fail=True), info=info)
    with pytest.raises(EngineFailure, match="page 2"):
        engine.recognize(_page())


def test_a_second_read_of_a_line_already_read_is_dropped() -> None:
    # GIVEN a page's OCR where PaddleX re-read a strip of a region that cuts through a line it
    # had read, and appended the garbled second read
    reads = [  # (text, score, x0, y0, x1, y1): the line, then the strip through its lower half
        ("Total amount payable: 1,284.50 EUR", 0.99, 44, 46, 929, 80),
        ("TOtat amiouiI payabte. 「,ZO4.30", 0.71, 38, 64, 929, 87),
    ]
    ocr = {
        "rec_texts": [text for text, *_ in reads],
        "rec_scores": [score for _, score, *_ in reads],
        "rec_polys": [[[x0, y0], [x1, y0], [x1, y1], [x0, y1]] for *_, x0, y0, x1, y1 in reads],
    }
    result = {**STRUCTURE_RESULT, "overall_ocr_res": ocr}
    # WHEN the page is converted
    content = structure_page_content(result, 1000, 800)
    # THEN only the first read is kept
    assert [line.text for line in content.lines] == ["Total amount payable: 1,284.50 EUR"]
