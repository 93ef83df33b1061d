"""A page's verdict on its own OCR: `ok`, or `review` with the reasons a person should look.

The signals are what the read itself left behind: line confidence (mean and low tail), ink no
line covers, line height (on the page, and as the text detector saw it), lines standing
upright, a contested orientation, a scan with too few pixels for its text; for a layout model,
no region found on a page with ink, or a table whose cells were not read. A page with ink and
no text is never `ok`. How each threshold was set: docs/thresholds.md#verdict.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from idp.contract.results import Line, PageQuality, RenderInfo, ReviewReason
from idp.document.decode import PageImage
from idp.document.ink import page_ink, text_ink_covered
from idp.document.ocr.engine import PageContent
from idp.document.ocr.steps.table_doubts import table_doubts
from idp.document.render_scale import POINTS_PER_INCH, higher_scale

__all__ = ["assess_page", "number_floor_for", "retry_scale", "second_read_is_better"]

# The verdict's thresholds: docs/thresholds.md#verdict
MIN_MEAN_CONFIDENCE: Final = 0.90  # a page's mean confidence under this is low
LOW_CONFIDENCE: Final = 0.6  # a line read under this is a low-confidence line
# Many unreadable lines: a 10th-percentile confidence under this, at least this many
# low-confidence lines, and more than this share of the page's.
MIN_P10_CONFIDENCE: Final = 0.60
MIN_LOW_CONFIDENCE_LINES: Final = 3
MAX_LOW_CONFIDENCE_SHARE: Final = 0.15
MIN_INK_COVERED: Final = 0.80  # less of the text-like ink inside a line is ink not read
# Text-like ink under this share of the page is dust and specks: the page is blank.
MIN_TEXT_INK_SHARE: Final = 0.002
MIN_LINE_PX: Final = 14.0  # median line height (rendered px) under which reading fails
MIN_DETECTED_LINE_PX: Final = 8.0  # the same, as the text detector saw the page (scaled down)
# A line whose thickness is 1.5× its length stands upright: a sideways page read as given.
UPRIGHT_RATIO: Final = 1.5
MAX_UPRIGHT_SHARE: Final = 0.5
# A numeric token whose least sure character is under its recognizer's floor is doubtful;
# PP-OCRv6 is surer of the numbers it reads wrong, so its floor is higher.
MIN_NUMBER_CONFIDENCE: Final = 0.70
PPOCRV6_MIN_NUMBER_CONFIDENCE: Final = 0.95
# A numeric token: digits and the separators , . / : - with a digit, as the real-document
# benchmark counts them; brackets, signs, currency and end punctuation around it left out.
_NUMERIC: Final = re.compile(r"[\d,./:-]*\d[\d,./:-]*")
_AROUND_NUMBERS: Final = "()[]{}\"'+%$€£¥;!?,.:"
# Reasons a higher scale can cure: more pixels per glyph. (Upside-down or missed text cannot.)
_SCALE_CURES: Final = frozenset(
    {
        ReviewReason.TEXT_TOO_SMALL,
        ReviewReason.LOW_CONFIDENCE,
        ReviewReason.MANY_UNREADABLE_LINES,
    }
)
# Lines at least this high already give the recognizer (48-px input) enough pixels: a page with
# low confidence and lines this tall is doubtful for another reason.
_RETRY_BELOW_LINE_PX: Final = 24.0


def number_floor_for(models: Sequence[str]) -> float:
    """The confidence under which a number read by an engine of `models` (EngineInfo's model
    names) is doubtful: its recognizer's."""
    if any(name.startswith("PP-OCRv6_") for name in models):
        return PPOCRV6_MIN_NUMBER_CONFIDENCE
    return MIN_NUMBER_CONFIDENCE


def assess_page(
    pixels: npt.NDArray[np.uint8],
    content: PageContent,
    render: RenderInfo | None,
    *,
    number_floor: float = MIN_NUMBER_CONFIDENCE,
) -> PageQuality:
    """The verdict on one OCR'd page: its pixels as read (H×W×3, the space of the line boxes),
    what the engine read on them, how a PDF page was rendered (None for an image), and the
    confidence under which a number read is doubtful (`number_floor_for` the engine)."""
    lines = content.lines
    reasons: set[ReviewReason] = set()
    marks = page_ink(pixels)
    ink = text_ink_covered(marks, [line.box for line in lines])
    if ink.share >= MIN_TEXT_INK_SHARE and ink.covered < MIN_INK_COVERED:
        reasons.add(ReviewReason.INK_NOT_READ)
    # Any ink counts here, not only glyph-shaped: a page of ink that yields nothing is never ok.
    if not lines and marks.share >= MIN_TEXT_INK_SHARE:
        reasons.add(ReviewReason.NO_TEXT_FOUND)
    if content.orientation is not None and content.orientation.evidence.get("contested"):
        reasons.add(ReviewReason.ORIENTATION_UNCERTAIN)
    reasons |= _layout_doubts(content, ink_share=marks.share)
    numbers, doubtful = _numbers_read(lines, number_floor)
    if doubtful:
        reasons.add(ReviewReason.NUMBERS_DOUBTFUL)
    quality = PageQuality(
        verdict="ok",
        lines=len(lines),
        dropped_lines=content.dropped_lines,
        ink_covered=round(ink.covered, 3),
        numbers=numbers,
        doubtful_numbers=doubtful,
    )
    if lines:
        confidences = np.array([line.confidence for line in lines])
        characters = np.array([max(1, len(line.text)) for line in lines])
        mean = float((confidences * characters).sum() / characters.sum())
        p10 = float(np.percentile(confidences, 10))
        low = int((confidences < LOW_CONFIDENCE).sum())
        lengths, thicknesses = _line_extents(lines)
        height = float(np.median(np.minimum(lengths, thicknesses)))
        upright = float(np.mean(thicknesses > UPRIGHT_RATIO * lengths))
        detected = None if content.detector_scale is None else height * content.detector_scale
        if not content.read_from_layer:  # the layer's text is exact, whatever its pixels
            reasons |= _reading_doubts(mean, p10, low, len(lines), height, detected, upright)
            if _scan_too_coarse(render, height):
                reasons.add(ReviewReason.LOW_RESOLUTION)
        quality = quality.model_copy(
            update={
                "mean_confidence": round(mean, 3),
                "p10_confidence": round(p10, 3),
                "low_confidence_lines": low,
                "line_height_px": round(height, 1),
                "detected_line_px": None if detected is None else round(detected, 1),
            }
        )
    ordered = [reason for reason in ReviewReason if reason in reasons]
    return quality.model_copy(update={"verdict": "review" if ordered else "ok", "reasons": ordered})


def _reading_doubts(
    mean: float,
    p10: float,
    low: int,
    count: int,
    height: float,
    detected: float | None,
    upright: float,
) -> set[ReviewReason]:
    """What the lines' confidences and sizes say of how well the pixels were read."""
    doubts: set[ReviewReason] = set()
    if mean < MIN_MEAN_CONFIDENCE:
        doubts.add(ReviewReason.LOW_CONFIDENCE)
    if (
        p10 < MIN_P10_CONFIDENCE
        and low >= MIN_LOW_CONFIDENCE_LINES
        and low / count > MAX_LOW_CONFIDENCE_SHARE
    ):
        doubts.add(ReviewReason.MANY_UNREADABLE_LINES)
    if height < MIN_LINE_PX:
        doubts.add(ReviewReason.TEXT_TOO_SMALL)
    if detected is not None and detected < MIN_DETECTED_LINE_PX:
        doubts.add(ReviewReason.TEXT_SHRUNK)
    if upright > MAX_UPRIGHT_SHARE:
        doubts.add(ReviewReason.TEXT_VERTICAL)
    return doubts


def _numbers_read(lines: Sequence[Line], floor: float) -> tuple[int | None, list[str]]:
    """How many numeric tokens the page's words with a confidence hold, and those of them
    with a character read under `floor`; None where no word has a confidence."""
    count, doubtful, measured = 0, [], False
    for line in lines:
        for word in line.words:
            if word.confidence is None:
                continue
            measured = True
            if _NUMERIC.fullmatch(word.text.strip(_AROUND_NUMBERS)) is None:
                continue
            count += 1
            if word.confidence < floor:
                doubtful.append(word.text)
    return (count if measured else None), doubtful


def _layout_doubts(content: PageContent, *, ink_share: float) -> set[ReviewReason]:
    """What a layout model's read leaves in doubt: no region found on a page with ink, a table
    region whose structure came back without cells or with none holding text, a table
    its text contradicts (steps.table_doubts), and what the steps found doubtful as they read."""
    doubts: set[ReviewReason] = set()
    if content.layout_regions == 0 and ink_share >= MIN_TEXT_INK_SHARE:
        doubts.add(ReviewReason.NO_LAYOUT_FOUND)
    if any(
        block.type == "table" and not any(cell.text.strip() for cell in block.cells)
        for block in content.blocks
        if block.label
    ):
        doubts.add(ReviewReason.TABLE_NOT_READ)
    return doubts | table_doubts(content) | set(content.doubts)


def retry_scale(image: PageImage, quality: PageQuality) -> float | None:
    """The scale to read a doubtful PDF page again at, where more pixels may cure what made it
    doubtful (small text, low confidence on small lines) and the page's scale can still rise;
    None where a second read is not worth it (an image, an ok page, tall lines, no room)."""
    render, height = image.render, quality.line_height_px
    if render is None or height is None or not _SCALE_CURES.intersection(quality.reasons):
        return None
    if ReviewReason.TEXT_TOO_SMALL not in quality.reasons and height >= _RETRY_BELOW_LINE_PX:
        return None
    return higher_scale(render, image.width, image.height, height)


def second_read_is_better(first: PageQuality, second: PageQuality) -> bool:
    """Whether a page's second read should replace its first: fewer doubts, then a higher
    mean confidence (a read with no lines counts as confidence 0)."""

    def rank(quality: PageQuality) -> tuple[int, float]:
        return len(quality.reasons), -(quality.mean_confidence or 0.0)

    return rank(second) <= rank(first)


def _line_extents(lines: Sequence[Line]) -> tuple[npt.NDArray[np.float64], ...]:
    """Each line's length along its reading direction (box[0] → box[1]) and its thickness
    (box[0] → box[3]): a turned page's boxes run along its text, not along the page's axes."""
    boxes = np.array([line.box for line in lines], dtype=np.float64)
    lengths = np.hypot(*(boxes[:, 1] - boxes[:, 0]).T)
    thicknesses = np.hypot(*(boxes[:, 3] - boxes[:, 0]).T)
    return lengths, thicknesses


def _scan_too_coarse(render: RenderInfo | None, line_px: float) -> bool:
    """Whether the page's scan itself has fewer pixels per text line than reading needs."""
    if render is None or render.scan_dpi is None:
        return False
    native = line_px * render.scan_dpi / (POINTS_PER_INCH * render.scale)
    return math.isfinite(native) and native < MIN_LINE_PX
