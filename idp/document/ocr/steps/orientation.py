"""Page orientation you can trust: tell an upright page from one scanned sideways or upside down,
and read it upright.

It works around any engine's read of a page (`read_upright`), so every model gets it. A page
classifier (idp.document.ocr.paddle.classifiers) only proposes a rotation. On charts, one-line
pages and other pages with little text it is often wrong, and a page read the wrong way comes
back empty. So the page's own lines decide:

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
`orientation_uncertain`. Rotations are as in idp.document.ocr.steps.geometry.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final, Protocol

import numpy as np

from idp.contract.results import Evidence, Line, OrientationCheck, Quad, Rotation
from idp.document.decode import PageImage
from idp.document.ocr.engine import LineReader, PageContent, failures_on_page
from idp.document.ocr.steps.geometry import content_on_original, quad_on_original, turn_upright

if TYPE_CHECKING:
    import numpy.typing as npt

    Pixels = npt.NDArray[np.uint8]

Read = Callable[[PageImage], PageContent]
"""One read of a page as it is given (turned or not): recognition and the steps after it."""


# The line check's constants: docs/thresholds.md#orientation
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


@dataclass(frozen=True)
class OrientationModels:
    """What checking a page's orientation runs; built once per process, shared by every engine.
    Without a line model the check rests on geometry and recognition confidence alone."""

    classifier: OrientationClassifier
    lines: LineOrientationModel | None = None


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

    def __init__(self, read: Read, page: PageImage) -> None:
        self._read = read
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
            self._done[rotation] = self._read(PageImage(page=self._page.page, pixels=pixels))
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


def read_upright(
    page: PageImage, read: Read, models: OrientationModels, reader: LineReader | None = None
) -> PageContent:
    """The page read upright, with every box on the page as uploaded: the classifier proposes,
    the page's lines decide (module docstring). `reader` reads cut-out lines on their own where
    the engine can; without it, a doubtful rotation costs a whole read of the page turned. The
    decision is on `orientation`, and what it cost apart from the reads on `orientation_ms`."""
    tick = time.perf_counter()
    classifier = models.classifier
    with failures_on_page(classifier.model_name, page.page):
        proposal = classifier.propose(page.pixels)
    readings = _Readings(read, page)
    check = _Check(page, readings, models, reader.read_lines if reader is not None else None)
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
    placed = content_on_original(content, rotation=rotation, width=page.width, height=page.height)
    # What finding the rotation cost, apart from reading the page (the reads are OCR).
    spent_ms = (time.perf_counter() - tick - readings.seconds) * 1000
    return replace(placed, orientation_ms=spent_ms, orientation=orientation)
