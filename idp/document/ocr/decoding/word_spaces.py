"""Word spaces the recognizer saw but lost to CTC's blank: which blank columns between two
characters are read as a space, and which spaces the model wrote are dropped."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from idp.document.ocr.decoding.characters import BLANK, SPACE, Floats, Int, classes_of
from idp.document.ocr.decoding.columns import emitted_columns, gap_pitch, line_pitch
from idp.document.ocr.decoding.dashes import DashGaps
from idp.document.ocr.decoding.ligatures import LigatureGaps
from idp.document.ocr.decoding.monospaced import monospaced_cells
from idp.document.ocr.decoding.numbers import NumberGaps
from idp.document.ocr.decoding.thresholds import (
    ANY_BLANK,
    FAR_GAP_COLUMNS,
    FAR_SPACE_EVIDENCE,
    INSIDE_NUMBER_EVIDENCE,
    LIST_GAP_COLUMNS,
    LIST_SPACE_EVIDENCE,
    MONOSPACED_SPACE_CELLS,
    NUMBER_SPACE_EVIDENCE,
    SPACE_EVIDENCE,
    WIDE_GAP_COLUMNS,
)


class WordGaps:
    """Finds the word spaces and dashes a recognition model's character list allows in the gaps
    of its CTC output, and the spaces it wrote that are none: the rules of numbers, ligatures
    and dashes each have their own collaborator, and a monospaced line its grid."""

    def __init__(self, characters: Sequence[str], *, threshold: float = SPACE_EVIDENCE) -> None:
        if not characters or characters[-1] != SPACE:
            raise ValueError("the model's character list does not end with the space class")
        self.space = len(characters) - 1
        self.threshold = threshold
        self._classes = classes_of(tuple(characters))
        self._numbers = NumberGaps(characters)
        self._ligatures = LigatureGaps(characters)
        self._dashes = DashGaps(characters)

    def dashes(self, best: Int, probs: Floats) -> tuple[Int, Int]:
        """Flat indices into `best` of the blank columns to be read as a dash, and the dash
        class of each (DashGaps.columns)."""
        return self._dashes.columns(best, probs)

    def number_spaces(self, best: Int) -> Int:
        """Flat indices into `best` of the spaces the model wrote inside a number that are none
        (NumberGaps.written_spaces)."""
        return self._numbers.written_spaces(best)

    def ligature_spaces(self, best: Int) -> Int:
        """Flat indices into `best` of the spaces the model wrote in the gap a ligature glyph
        leaves (LigatureGaps.written_spaces)."""
        return self._ligatures.written_spaces(best)

    def columns(self, best: Int, space_prob: Floats, digits: Int | None = None) -> Int:
        """Flat indices into `best` (lines × columns, each column's most likely class) of the
        blank columns that are to be read as a space; `space_prob` is p(space) per column.
        `digits` is `best` with its look-alike letters read as digits (LookalikeDigits), for
        telling a thousands group: PP-OCRv5 read "122,000" as "122,0o0", and a comma before
        "0o0" looked like a list's ("122, 000")."""
        width = best.shape[1]
        classes, emitted = emitted_columns(best)
        if emitted.size < 2:
            return np.empty(0, dtype=np.intp)
        left, right = emitted[:-1], emitted[1:]
        left_class, right_class = classes[left], classes[right]
        line = left // width
        # Neighbouring characters of one line with no space written between them.
        adjacent = (
            (line == right // width) & (left_class != self.space) & (right_class != self.space)
        )
        distance = right - left
        known = self._classes
        numbers = self._numbers
        pitch = line_pitch(line[adjacent], distance[adjacent])
        grouped = classes if digits is None else digits.ravel()
        thousands = numbers.thousands_groups(grouped, emitted, width)
        list_comma = numbers.list_commas(classes, emitted, width, distance, pitch, thousands)
        negative = numbers.negative_numbers(classes, emitted, width, distance, pitch) & adjacent
        range_dash = numbers.after_range_dash(classes, emitted, width)
        candidate = (
            adjacent
            & (distance >= 2)
            & (known.ends_word[left_class] | range_dash)
            & (known.starts_word[right_class] | negative)
            & ~self._ligatures.after(classes, emitted, width)
            & ~(thousands & ~list_comma)
        )
        if not candidate.any():
            return np.empty(0, dtype=np.intp)
        evidence = np.where(classes == BLANK, space_prob.ravel(), 0.0)
        starts, ends = left[candidate] + 1, right[candidate]
        bounds = np.column_stack((starts, ends)).ravel()
        strongest = np.maximum.reduceat(evidence, bounds)[::2]
        # A number after a word: weaker evidence will do; inside a number, stronger evidence is
        # needed (docs/thresholds.md#a-number-after-a-word, #spaces-inside-numbers).
        before_number = (
            numbers.after_word(classes, emitted, width)
            | numbers.after_label(classes, emitted, width)
        )[candidate]
        inside_number = (numbers.inside(classes, emitted, width) | range_dash)[candidate]
        needed = np.where(before_number, NUMBER_SPACE_EVIDENCE, self.threshold)
        needed = np.where(inside_number, max(self.threshold, INSIDE_NUMBER_EVIDENCE), needed)
        # A list's comma: weak evidence will do, and two columns over the pitch any blank column
        # will (the comma and a word space there). So will a gap half the line's height wide.
        wide_list = list_comma & (distance >= gap_pitch(line, pitch) + LIST_GAP_COLUMNS)
        needed = np.where(list_comma[candidate], LIST_SPACE_EVIDENCE, needed)
        needed = np.where(wide_list[candidate] | negative[candidate], ANY_BLANK, needed)
        spread = inside_number & (distance[candidate] >= WIDE_GAP_COLUMNS)
        after_date = np.zeros(inside_number.size, dtype=bool)
        after_date[inside_number] = numbers.after_date(
            classes, emitted, width, np.flatnonzero(candidate)[inside_number]
        )
        needed = np.where(spread | after_date, np.minimum(needed, LIST_SPACE_EVIDENCE), needed)
        # A gap the line's height wide: a space on the least evidence, and on none at all where
        # it is also twice the line's pitch (a tiny label's digits, scaled up, stand as far
        # apart as its gap; R's monospaced vectors set every digit at the gap).
        far = inside_number & (distance[candidate] >= FAR_GAP_COLUMNS)
        clear = far & (distance[candidate] >= 2 * gap_pitch(line, pitch)[candidate])
        needed = np.where(far, np.minimum(needed, FAR_SPACE_EVIDENCE), needed)
        needed = np.where(clear, ANY_BLANK, needed)
        strong = strongest >= needed
        if not strong.any():
            return np.empty(0, dtype=np.intp)
        chosen = np.flatnonzero(candidate)[strong]
        # Inside a number a gap must be wider than the line's pitch: digits are set at one
        # width, and the blank a narrow "1" leaves is no space ("1 7/03/2026"). After a comma
        # that is not a thousands one, the strong evidence asked there will do at the pitch
        # (docs/thresholds.md#list-commas).
        inside = inside_number[strong]
        at_pitch = (distance[chosen] >= pitch[line[chosen]]) | spread[strong]
        over_pitch = (distance[chosen] > pitch[line[chosen]]) | spread[strong]
        after_comma = numbers.comma_between_digits(classes, emitted, width)[chosen]
        wide = np.where(inside & ~after_comma, over_pitch, at_pitch)
        # On a line set in a monospaced font a word space fills a cell of its own: a gap
        # narrower than MONOSPACED_SPACE_CELLS is none, whatever p(space)
        # (docs/thresholds.md#monospaced-lines).
        cell = monospaced_cells(classes, emitted, width, self.space)[line[chosen]]
        wide &= (cell == 0) | (distance[chosen] >= MONOSPACED_SPACE_CELLS * cell)
        return np.array(
            [
                start + int(np.argmax(evidence[start:end]))
                for start, end in zip(starts[strong][wide], ends[strong][wide], strict=True)
            ],
            dtype=np.intp,
        )
