"""The CTC decode of a text line that applies the decoding rules: a drop-in for PaddleX's
CTCLabelDecode, the recognition model's post-processing."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from idp.document.ocr.decoding.characters import BLANK, SPACE, Floats, Int
from idp.document.ocr.decoding.columns import token_columns
from idp.document.ocr.decoding.halfwidth import HalfwidthForms
from idp.document.ocr.decoding.lookalikes import LookalikeDigits, ThousandsCommas
from idp.document.ocr.decoding.thresholds import SPACE_EVIDENCE, THOUSANDS_COMMA_EVIDENCE
from idp.document.ocr.decoding.word_spaces import WordGaps
from idp.document.ocr.timings import step


class SpaceAwareCtcDecode:
    """Drop-in for PaddleX's CTCLabelDecode (a text recognition model's `post_op`) that also
    writes the word spaces and dashes `WordGaps` finds, drops the spaces it finds none, reads
    fullwidth forms on a Latin line as ASCII (`HalfwidthForms`) and, with `lookalike_digits`,
    look-alike letters in a number as digits and thousands points as commas (`LookalikeDigits`,
    `ThousandsCommas`). `base` is the model's own decoder: it keeps the character list and
    turns the column classes into text (and word boxes when asked).

    Everything else decodes exactly as PaddleX does (duplicates merged, blanks dropped, the
    same per-character confidence); an inserted space or dash counts in the line's confidence
    at its own probability. Taking the argmax once instead of PaddleX's argmax and max makes
    it cheaper than the stock decoder."""

    def __init__(
        self,
        base: Any,
        *,
        threshold: float = SPACE_EVIDENCE,
        lookalike_digits: bool = True,
        thousands_comma_evidence: float = THOUSANDS_COMMA_EVIDENCE,
    ) -> None:
        self.base = base
        self.character: list[str] = base.character
        self.gaps = WordGaps(self.character, threshold=threshold)
        self.lookalikes = LookalikeDigits(self.character)
        self.thousands_commas = ThousandsCommas(self.character, evidence=thousands_comma_evidence)
        self.halfwidth = HalfwidthForms(self.character)
        self.swap_lookalikes = lookalike_digits
        self._record: dict[str, list[float]] | None = None

    @contextmanager
    def token_confidences(self) -> Iterator[dict[str, list[float]]]:
        """While open, collects for every line decoded the confidence of each of its
        whitespace-separated tokens (the lowest of its characters'), keyed by the line's text;
        a text read twice keeps the lower of each. In a token that is mostly digits a digit
        counts its look-alike letters' probability too (LookalikeDigits.digit_confidence)."""
        record: dict[str, list[float]] = {}
        self._record = record
        try:
            yield record
        finally:
            self._record = None

    def _keep_token_confidences(
        self, best: Int, confidence: Floats, decoded: Sequence[Any]
    ) -> None:
        record = self._record
        if record is None:
            return
        for line, read in enumerate(decoded):
            tokens = token_columns(best[line], self.gaps.space)
            text = "".join(self.character[c] for token in tokens for c in best[line][token])
            if text != read[0].replace(SPACE, ""):  # a model that reverses its text (Arabic)
                continue
            lowest = [float(confidence[line][token].min()) for token in tokens]
            known = record.get(read[0])
            record[read[0]] = lowest if known is None else list(map(min, known, lowest))

    def __call__(
        self, pred: Sequence[Any], return_word_box: bool = False, **kwargs: Any
    ) -> tuple[list[Any], list[float]]:
        with step("decoding"):  # the CTC decode with its rules, apart from recognition
            return self._decode(pred, return_word_box, **kwargs)

    def _decode(
        self, pred: Sequence[Any], return_word_box: bool, **kwargs: Any
    ) -> tuple[list[Any], list[float]]:
        probs = np.asarray(pred[0])
        best = probs.argmax(axis=-1)
        halfwidth, fullwidth = self.halfwidth.swap(best)
        np.put(best, self.gaps.ligature_spaces(best), BLANK)
        np.put(best, self.gaps.number_spaces(best), BLANK)
        dash_columns, dash_classes = self.gaps.dashes(best, probs)
        np.put(best, dash_columns, dash_classes)
        digits = None
        if self.swap_lookalikes:  # the same emitted columns, look-alike letters read as digits
            digits = best.copy()
            self.lookalikes.swap(digits, probs)
        spaces = self.gaps.columns(best, probs[..., self.gaps.space], digits)
        np.put(best, spaces, self.gaps.space)
        if self.swap_lookalikes:
            self.lookalikes.swap(best, probs)
            self.thousands_commas.swap(best, probs)
        confidence = np.take_along_axis(probs, best[..., None], axis=-1)[..., 0]
        # Both forms of a character are one reading of the glyph: their probabilities add up.
        at = halfwidth & (best == self.halfwidth.plain[best])
        confidence[at] += probs[at][np.arange(int(at.sum())), fullwidth[at[halfwidth]]]
        confidence = np.minimum(confidence, 1.0)
        decoded = self.base.decode(
            best, confidence, is_remove_duplicate=True, return_word_box=return_word_box
        )
        if self._record is not None:
            digits = self.lookalikes.digit_confidence(best, probs, confidence)
            self._keep_token_confidences(best, digits, decoded)
        if return_word_box:  # as CTCLabelDecode: word box columns relative to the batch width
            for line, read in enumerate(decoded):
                read[2][0] = read[2][0] * (kwargs["wh_ratio_list"][line] / kwargs["max_wh_ratio"])
        texts = [read[0] if len(read) <= 2 else (read[0], read[2]) for read in decoded]
        return texts, [read[1] for read in decoded]
