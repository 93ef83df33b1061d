"""Fullwidth forms the recognizer wrote on a line of no Chinese, Japanese or Korean ("，", "２"),
read as the ASCII characters they stand for."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np

from idp.document.ocr.decoding.characters import Flags, Int, is_east_asian_wide


class HalfwidthForms:
    """Reads a fullwidth form the recognizer wrote in a line of no Chinese, Japanese or Korean
    ("(13，5, 20，22", "0２4") as the ASCII character it stands for. The multilingual models
    carry both forms of every ASCII mark, digit and letter (U+FF01-FF5E), and now and then
    pick the fullwidth one on a Latin line, which no word-space rule takes for its ASCII
    character (docs/thresholds.md#halfwidth-forms). A line with a character of those scripts
    keeps every form as read."""

    def __init__(self, characters: Sequence[str]) -> None:
        index = {ch: number for number, ch in enumerate(characters)}
        plain = np.arange(len(characters))
        for ch, number in index.items():
            if len(ch) == 1 and 0xFF01 <= ord(ch) <= 0xFF5E:
                plain[number] = index.get(unicodedata.normalize("NFKC", ch), number)
        self.plain = plain
        self.fullwidth = plain != np.arange(len(characters))
        wide = np.fromiter(
            (is_east_asian_wide(ch) for ch in characters), dtype=bool, count=len(characters)
        )
        self.wide_script = wide & ~self.fullwidth

    def swap(self, best: Int) -> tuple[Flags, Int]:
        """Rewrite `best` (lines × columns) in place; the columns rewritten, and the fullwidth
        class each held."""
        lines_of_wide_script = self.wide_script[best].any(axis=1)
        swapped: Flags = self.fullwidth[best] & ~lines_of_wide_script[:, None]
        was: Int = best[swapped]
        best[swapped] = self.plain[was]
        return swapped, was
