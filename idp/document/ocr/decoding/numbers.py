"""The gaps inside and around numbers, dates and codes: which are no word space whatever the
columns say, which need more or less evidence, and which spaces the model wrote are none."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import numpy as np

from idp.document.ocr.decoding.characters import Flags, Floats, Int, classes_of
from idp.document.ocr.decoding.columns import (
    emitted_columns,
    gap_pitch,
    line_pitch,
    space_columns,
)
from idp.document.ocr.decoding.thresholds import LIST_GAP_COLUMNS

# A whole date (2003-03-07, 17/03/2026, 7.3.2026) at the end of what a line has read so far
# (docs/thresholds.md#dates-and-negative-numbers).
_DATE_END: Final = re.compile(r"(?<![\d.,/:-])(?:\d{4}-\d{2}-\d{2}|\d{1,2}[/.]\d{1,2}[/.]\d{4})$")


class NumberGaps:
    """Per gap between the characters CTC emits (flat indices `emitted` into `classes`, lines
    `width` columns wide): where it stands to the numbers of its line."""

    def __init__(self, characters: Sequence[str]) -> None:
        self.space = len(characters) - 1
        self._characters = tuple(characters)
        self._classes = classes_of(self._characters)
        self._colon = characters.index(":") if ":" in characters else -1

    def inside(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Is it inside a number, date or code? A digit before a digit ("1 7/03" is the blank a
        narrow "1" leaves), or a number mark that follows a digit before a digit ("11, 111.11").
        The model's own spaces there are kept."""
        known = self._classes
        left, right = classes[emitted[:-1]], classes[emitted[1:]]
        after_digit = np.zeros(left.size, dtype=bool)
        if left.size > 1:
            before = emitted[:-2]
            after_digit[1:] = known.is_digit[classes[before]] & (
                before // width == emitted[1:-1] // width
            )
        inside: Flags = known.is_digit[right] & (
            known.is_digit[left] | (known.joins_digits[left] & after_digit)
        )
        return inside

    def thousands_groups(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Is it after a thousands separator, a comma between a digit and a group of exactly
        three digits that ends the number ("1,117,411.70")? Such a gap is never a word space
        unless the model wrote one: a list of numbers ("17, 71") has groups of other lengths,
        or a written space."""
        known = self._classes
        count = emitted.size - 1
        found = np.zeros(max(count, 0), dtype=bool)
        if count < 4:
            return found
        line = emitted // width
        digit = known.is_digit[classes[emitted]]
        comma = known.groups_digits[classes[emitted]]
        for gap in np.flatnonzero(comma[1:-3]) + 1:  # the comma's index among the emitted
            found[gap] = bool(
                digit[gap - 1]
                and line[gap - 1] == line[gap] == line[gap + 1]
                and group_ends_number(digit, line, gap + 1)
            )
        return found

    def list_commas(
        self,
        classes: Int,
        emitted: Int,
        width: int,
        distance: Int,
        pitch: Floats,
        thousands: Flags,
    ) -> Flags:
        """Is it after a comma that separates two numbers of a list ("37, 70", "121, 123")? A
        comma after a digit, before a digit, with the gap wider than the line's pitch, before a
        group that cannot be thousands (not exactly three digits), or at least LIST_GAP_COLUMNS
        wider before any group: a thousands or decimal comma sits as close as any two digits,
        a list's comma has a word space after it."""
        per_gap = gap_pitch(emitted[:-1] // width, pitch)
        found: Flags = (
            self.comma_between_digits(classes, emitted, width)
            & (per_gap > 0)
            & ((distance >= per_gap + LIST_GAP_COLUMNS) | ((distance > per_gap) & ~thousands))
        )
        return found

    def negative_numbers(
        self, classes: Int, emitted: Int, width: int, distance: Int, pitch: Floats
    ) -> Flags:
        """Does a negative number start after it ("1 -0.1")? A minus before a digit of its line,
        LIST_GAP_COLUMNS or more over the line's pitch after a digit: a dash inside a date, a
        range or a code ("2003-03-07", "10-20") sits at the pitch. After a letter a wide hyphen
        is a code's ("AVX-512")."""
        known = self._classes
        line = emitted[:-1] // width
        found = np.zeros(line.size, dtype=bool)
        if line.size < 2:
            return found
        per_gap = gap_pitch(line, pitch)
        found[:-1] = (
            known.is_digit[classes[emitted[:-2]]]
            & known.is_minus[classes[emitted[1:-1]]]
            & known.is_digit[classes[emitted[2:]]]
            & (emitted[2:] // width == line[:-1])
        )
        found &= (per_gap > 0) & (distance >= per_gap + LIST_GAP_COLUMNS)
        return found

    def after_date(self, classes: Int, emitted: Int, width: int, gaps: Int) -> Flags:
        """Per gap of `gaps` (indices of gaps between emitted characters): does a whole date end
        right before it on its line?"""
        found = np.zeros(gaps.size, dtype=bool)
        line = emitted // width
        for n, gap in enumerate(gaps):
            before = emitted[max(0, gap - 10) : gap + 1]
            text = "".join(self._characters[classes[e]] for e in before if e // width == line[gap])
            found[n] = _DATE_END.search(text) is not None
        return found

    def after_range_dash(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Does it follow a dash that has a digit before it and a digit after the gap, all on one
        line ("1.36 - 1.41", a price range)? A space there needs the evidence and width asked
        inside a number: a date's or a code's dash sits at the pitch ("2026-03-17")."""
        return self._after_mark_between_digits(self._classes.is_dash, classes, emitted, width)

    def comma_between_digits(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Does it follow a comma that has a digit before it and a digit after the gap, all on
        one line?"""
        return self._after_mark_between_digits(self._classes.groups_digits, classes, emitted, width)

    def _after_mark_between_digits(
        self, mark: Flags, classes: Int, emitted: Int, width: int
    ) -> Flags:
        known = self._classes
        line = emitted[:-1] // width
        after_digit = np.zeros(line.size, dtype=bool)
        if line.size > 1:
            after_digit[1:] = known.is_digit[classes[emitted[:-2]]] & (
                emitted[:-2] // width == line[1:]
            )
        found: Flags = (
            mark[classes[emitted[:-1]]]
            & after_digit
            & known.is_digit[classes[emitted[1:]]]
            & (emitted[1:] // width == line)
        )
        return found

    def after_word(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Does a digit follow a lowercase word (its last three characters lowercase letters of
        the same line: "invoice3442", not "x86" or "mp3")?"""
        known = self._classes
        found = np.zeros(max(emitted.size - 1, 0), dtype=bool)
        if emitted.size < 4:
            return found
        line = emitted // width
        lower = known.is_lower[classes[emitted]]
        found[2:] = (
            lower[:-3]
            & lower[1:-2]
            & lower[2:-1]
            & (line[:-3] == line[3:])
            & known.is_digit[classes[emitted[3:]]]
        )
        return found

    def after_label(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Does a digit follow a label's colon (a word that starts with a capital, then the
        colon, then the digit, all on one line: "SIRET: 975…", "VAT/TIN: 2967…")? A lowercase
        word before a colon is a scheme printed tight against what follows
        ("doi:10.2307/1913610") and keeps the usual rule."""
        known = self._classes
        found = np.zeros(max(emitted.size - 1, 0), dtype=bool)
        if emitted.size < 3:
            return found
        line = emitted // width
        characters = classes[emitted]
        found[1:] = (
            known.is_letter[characters[:-2]]
            & (characters[1:-1] == self._colon)
            & known.is_digit[characters[2:]]
            & (line[:-2] == line[2:])
        )
        for gap in np.flatnonzero(found):
            start = gap - 1  # the word's first letter: back over the letters of its line
            while (
                start > 0
                and known.is_letter[characters[start - 1]]
                and line[start - 1] == line[gap]
            ):
                start -= 1
            found[gap] = bool(known.is_upper[characters[start]])
        return found

    def written_spaces(self, best: Int) -> Int:
        """Flat indices into `best` of the space columns the model wrote inside a number where
        its two sides are closer than the line's pitch ("11, 111.11"; "17, 71" and "+44 20" are
        wider), or no wider than the pitch after a comma, before a thousands group that ends
        the number ("5, 070"): a list's comma stands a word space further from its number."""
        width = best.shape[1]
        classes, emitted = emitted_columns(best)
        if emitted.size < 3:
            return np.empty(0, dtype=np.intp)
        line = emitted // width
        written = classes[emitted] == self.space
        neighbours = ~written[:-1] & ~written[1:] & (line[:-1] == line[1:])
        # Per line its pitch; 0 (nothing is narrower) on a line without two neighbours.
        pitch = np.zeros(int(line.max()) + 1, dtype=np.float64)
        known_pitch = line_pitch(line[:-1][neighbours], np.diff(emitted)[neighbours])
        pitch[: known_pitch.size] = known_pitch
        left, space, right = emitted[:-2], emitted[1:-1], emitted[2:]
        known = self._classes
        after_digit = np.zeros(left.size, dtype=bool)
        after_digit[1:] = known.is_digit[classes[emitted[:-3]]] & (line[:-3] == line[1:-2])
        inside = (
            (classes[space] == self.space)
            & (line[:-2] == line[2:])
            & known.is_digit[classes[right]]
            & (known.is_digit[classes[left]] | (known.joins_digits[classes[left]] & after_digit))
        )
        grouped = inside & known.groups_digits[classes[left]] & (right - left <= pitch[line[:-2]])
        digit = known.is_digit[classes[emitted]]
        for n in np.flatnonzero(grouped):
            grouped[n] = line[n + 2] == line[n] and group_ends_number(digit, line, n + 2)
        hits = np.flatnonzero(inside & ((right - left < pitch[line[:-2]]) | grouped))
        return space_columns(classes, space[hits], right[hits], self.space)


def group_ends_number(digit: Flags, line: Int, start: int) -> bool:
    """Do the emitted characters from index `start` on begin with exactly three digits of one
    line that end their number (no digit of that line right after them): a thousands group?
    `digit` and `line` are per emitted character."""
    after = start + 3
    return bool(
        after <= digit.size
        and digit[start:after].all()
        and (line[start:after] == line[start]).all()
        and (after == digit.size or line[after] != line[start] or not digit[after])
    )
