"""A dash set without spaces between two words ("recording—while"), which the model saw in a
blank column but did not write."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from idp.document.ocr.decoding.characters import BLANK, DASHES, Floats, Int, classes_of
from idp.document.ocr.decoding.columns import emitted_columns
from idp.document.ocr.decoding.thresholds import DASH_EVIDENCE


class DashGaps:
    """Finds the dashes a model's character list allows, in the blank columns of its output."""

    def __init__(self, characters: Sequence[str]) -> None:
        self._classes = classes_of(tuple(characters))
        self._dashes = np.array([characters.index(d) for d in DASHES if d in characters])

    def columns(self, best: Int, probs: Floats) -> tuple[Int, Int]:
        """Flat indices into `best` of the blank columns to be read as a dash, and the dash class
        of each: one per gap between two letters or digits of a line, where the dash classes
        together reach DASH_EVIDENCE; `probs` is the model's output (lines × columns × classes)."""
        none = np.empty(0, dtype=np.intp)
        if not self._dashes.size:
            return none, none
        width = best.shape[1]
        classes, emitted = emitted_columns(best)
        if emitted.size < 2:
            return none, none
        left, right = emitted[:-1], emitted[1:]
        is_word = self._classes.is_word
        gaps = np.flatnonzero(
            (left // width == right // width)
            & (right - left >= 2)
            & is_word[classes[left]]
            & is_word[classes[right]]
        )
        if not gaps.size:
            return none, none
        dash_probs = probs.reshape(-1, probs.shape[-1])[:, self._dashes]
        evidence = np.where(classes == BLANK, dash_probs.sum(axis=1), 0.0)
        columns = [
            left[gap] + 1 + int(np.argmax(evidence[left[gap] + 1 : right[gap]])) for gap in gaps
        ]
        chosen = np.array([c for c in columns if evidence[c] >= DASH_EVIDENCE], dtype=np.intp)
        if not chosen.size:
            return none, none
        dash: Int = self._dashes[np.argmax(dash_probs[chosen], axis=1)]
        return chosen, dash
