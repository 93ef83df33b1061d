"""Digits and commas the recognizer saw close behind what it wrote: a look-alike letter read as
its digit inside a number ("2O26"), a point before exactly three digits as a comma ("37.313")."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

import numpy as np

from idp.document.ocr.decoding.characters import Floats, Int, classes_of
from idp.document.ocr.decoding.columns import token_columns
from idp.document.ocr.decoding.thresholds import (
    GROUP_LOOKALIKE_EVIDENCE,
    LOOKALIKE_EVIDENCE,
    THOUSANDS_COMMA_EVIDENCE,
)

# Letters the recognizer mistakes for digits, and the digit each stands for
# (docs/thresholds.md#look-alike-digits).
LOOKALIKE_DIGITS: Final = {
    "O": "0",
    "o": "0",
    "D": "0",
    "l": "1",
    "I": "1",
    "i": "1",
    "S": "5",
    "B": "8",
}


class LookalikeDigits:
    """Reads a letter the recognizer took for a look-alike digit (O/0, l/1, i/1, S/5, B/8) as that
    digit, inside a token that is mostly digits ("2O26", "1l,50"), where the digit is close
    behind the letter in the column's probabilities. A token with fewer than two digits, or
    with more than one letter for every two digits, is a word or a code and is left alone; but
    a thousands group is a number's wherever it stands ("4,ooo")."""

    def __init__(self, characters: Sequence[str], *, evidence: float = LOOKALIKE_EVIDENCE) -> None:
        index = {ch: number for number, ch in enumerate(characters)}
        self.digit_of = {
            index[letter]: index[digit]
            for letter, digit in LOOKALIKE_DIGITS.items()
            if letter in index and digit in index
        }
        self.evidence = evidence
        self.space = len(characters) - 1
        self._classes = classes_of(tuple(characters))

    def numbers(self, best: Int) -> Iterator[tuple[int, Int]]:
        """(line, columns where it emits its characters) of each token of `best` that is mostly
        digits."""
        known = self._classes
        for line in range(best.shape[0]):
            for token in token_columns(best[line], self.space):
                classes = best[line][token]
                digits = int(known.is_digit[classes].sum())
                letters = int(known.is_letter[classes].sum())
                if digits >= 2 and 2 * letters <= digits:
                    yield line, token

    def thousands_groups(self, best: Int) -> Iterator[tuple[int, Int]]:
        """(line, columns) of each thousands group of `best` with a look-alike letter in it: a
        digit and a comma, then three digits or look-alike letters, at least one a letter, and
        nothing after them in the token but a mark ("4,ooo", "1,5oo.", not "4,Ohio")."""
        known = self._classes
        for line in range(best.shape[0]):
            for token in token_columns(best[line], self.space):
                classes = best[line][token]
                for comma in np.flatnonzero(known.groups_digits[classes[1:-3]]) + 1:
                    group = classes[comma + 1 : comma + 4]
                    after = comma + 4
                    lookalike = np.isin(group, list(self.digit_of))
                    if (
                        known.is_digit[classes[comma - 1]]
                        and (known.is_digit[group] | lookalike).all()
                        and lookalike.any()
                        and (after == classes.size or not known.is_word[classes[after]])
                    ):
                        yield line, token[comma + 1 : comma + 4]

    def swap(self, best: Int, probs: Floats) -> int:
        """Rewrite `best` (lines × columns) in place; the number of letters read as digits."""
        swapped = 0
        for line, group in list(self.thousands_groups(best)):
            row = best[line]
            for column in group[np.isin(row[group], list(self.digit_of))]:
                swapped += self._swap_run(row, probs[line], int(column), GROUP_LOOKALIKE_EVIDENCE)
        for line, token in list(self.numbers(best)):
            row = best[line]
            for column in token[np.isin(row[token], list(self.digit_of))]:
                swapped += self._swap_run(row, probs[line], int(column), self.evidence)
        return swapped

    def digit_confidence(self, best: Int, probs: Floats, confidence: Floats) -> Floats:
        """`confidence` (per column of `best`) where each digit of a token that is mostly digits
        also counts its look-alike letters' probability: in a number "O" is a way of writing
        "0", not a doubt about it (a receipt's "40" in capitals: p(0) 0.6, p(O) 0.35)."""
        letters_of: dict[int, list[int]] = {}
        for letter, digit in self.digit_of.items():
            letters_of.setdefault(digit, []).append(letter)
        adjusted = confidence.copy()
        for line, token in self.numbers(best):
            for column in token:
                letters = letters_of.get(int(best[line, column]))
                if letters:
                    adjusted[line, column] += float(probs[line, column, letters].sum())
        return np.minimum(adjusted, 1.0)

    def _swap_run(self, row: Int, probs: Floats, start: int, evidence: float) -> int:
        letter = int(row[start])
        digit = self.digit_of[letter]
        end = start + 1
        while end < row.size and row[end] == letter:
            end += 1
        # The same digit right before or after would merge with it under CTC's rule.
        if (start > 0 and row[start - 1] == digit) or (end < row.size and row[end] == digit):
            return 0
        if float(probs[start:end, digit].max()) < evidence:
            return 0
        row[start:end] = digit
        return 1


class ThousandsCommas:
    """Reads a point the recognizer wrote between a digit and exactly three more ("37.313",
    "2.429,743") as a comma, where the comma stands close behind it in the column's
    probabilities (the recognizer's own evidence: THOUSANDS_COMMA_EVIDENCE,
    PPOCRV6_THOUSANDS_COMMA_EVIDENCE). At 200 dpi a small comma and a point are a few pixels
    apart; a point printed there ("7.704", "3.000") leaves the comma far less, so the rule
    goes one way only (docs/thresholds.md#thousands-commas)."""

    def __init__(
        self, characters: Sequence[str], *, evidence: float = THOUSANDS_COMMA_EVIDENCE
    ) -> None:
        index = {ch: number for number, ch in enumerate(characters)}
        self.point, self.comma = index.get(".", -1), index.get(",", -1)  # -1: no such class
        self.evidence = evidence
        self.space = len(characters) - 1
        self._classes = classes_of(tuple(characters))

    def swap(self, best: Int, probs: Floats) -> int:
        """Rewrite `best` (lines × columns) in place; the number of points read as commas."""
        if self.point < 0 or self.comma < 0:
            return 0
        is_digit = self._classes.is_digit
        swapped = 0
        for line in range(best.shape[0]):
            row = best[line]
            for token in token_columns(row, self.space):
                digit = is_digit[row[token]]
                for k in np.flatnonzero(row[token] == self.point):
                    grouped = (
                        k > 0 and digit[k - 1] and k + 3 < token.size and digit[k + 1 : k + 4].all()
                    )
                    if grouped and (k + 4 == token.size or not digit[k + 4]):
                        swapped += self._swap_run(row, probs[line], int(token[k]))
        return swapped

    def _swap_run(self, row: Int, probs: Floats, start: int) -> int:
        end = start + 1
        while end < row.size and row[end] == self.point:
            end += 1
        if float(probs[start:end, self.comma].max()) < self.evidence:
            return 0
        row[start:end] = self.comma
        return 1
