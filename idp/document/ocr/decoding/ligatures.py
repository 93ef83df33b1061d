"""The gap an fi or fl ligature glyph leaves after it: never a word space, and a space the model
wrote there is dropped ("fi lename", "effi cient")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from idp.document.ocr.decoding.characters import Flags, Int, classes_of
from idp.document.ocr.decoding.columns import emitted_columns, space_columns


class LigatureGaps:
    """Finds the gaps after an fi or fl before a lowercase letter, in a model's CTC output."""

    def __init__(self, characters: Sequence[str]) -> None:
        self.space = len(characters) - 1
        self._classes = classes_of(tuple(characters))

    def written_spaces(self, best: Int) -> Int:
        """Flat indices into `best` of the space columns the model wrote right after an fi or
        fl and before a lowercase letter of the same line: the gap a ligature glyph leaves,
        which the model reads as a word space ("fi lename", "defi nition", "effi cient")."""
        width = best.shape[1]
        classes, emitted = emitted_columns(best)
        if emitted.size < 4:
            return np.empty(0, dtype=np.intp)
        tail, space, right = emitted[1:-2], emitted[2:-1], emitted[3:]
        hits = np.flatnonzero(
            self._ligature_ends(classes, emitted, width)[1:-2]
            & (classes[space] == self.space)
            & self._classes.is_lower[classes[right]]
            & (tail // width == right // width)
        )
        return space_columns(classes, space[hits], right[hits], self.space)

    def after(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Per gap between emitted characters (flat indices `emitted` into `classes`, lines
        `width` columns wide): does it follow an fi or fl and come before a lowercase letter?"""
        right = emitted[1:]
        return (
            self._ligature_ends(classes, emitted, width)[:-1]
            & self._classes.is_lower[classes[right]]
        )

    def _ligature_ends(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Per emitted character: is it the i or l of an fi or fl of its line? Many fonts draw
        those as one wide glyph, which the recognizer reads as two characters with a gap after
        them ("fi xed", "specifi cation")."""
        known = self._classes
        ends = np.zeros(emitted.size, dtype=bool)
        f, tail = emitted[:-1], emitted[1:]
        ends[1:] = (
            known.is_f[classes[f]]
            & known.ends_ligature[classes[tail]]
            & (f // width == tail // width)
        )
        return ends
