"""What the decoding rules know of each class of a recognition model's character list: which
characters may border a word space, sit inside a number or draw a ligature."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import numpy as np
import numpy.typing as npt

Int = npt.NDArray[np.intp]
Floats = npt.NDArray[np.floating[Any]]
Flags = npt.NDArray[np.bool_]

BLANK: Final = 0  # CTC blank: PaddleX puts it first in the model's character list
SPACE: Final = " "  # and the space last (use_space_char)
DASHES: Final = ("—", "–", "-")  # em dash, en dash, hyphen-minus

# Closing marks a word space may follow, and opening brackets one may precede, besides letters
# and digits (Unicode categories Pe/Ps cover brackets of every script, Sc currency signs). An
# ampersand stands as a word of its own as often as inside one ("Smith & Co", "R&D").
_ENDS_WORD_MARKS: Final = frozenset(",.;:!?%&")
_STARTS_WORD_MARKS: Final = frozenset("+&")
# Closing brackets and currency signs; opening brackets and currency signs.
_ENDS_WORD_CATEGORIES: Final = frozenset({"Pe", "Sc"})
_STARTS_WORD_CATEGORIES: Final = frozenset({"Ps", "Sc"})
_EAST_ASIAN_WIDE: Final = frozenset({"W", "F"})
# Marks that stand as a word of their own: a form's check boxes and radio buttons, bullets, tick
# marks (docs/thresholds.md#word-spaces).
_STANDALONE_MARKS: Final = frozenset("□■▢▣◻◼▪▫○●◯◦•☐☑☒✓✔✗✘")
# Marks set between the digits of one number, date, time or code ("1,284.50", "17/03/2026",
# "9:00", "20-11-17"): a blank column after one of them, before a digit, is no word gap.
_NUMBER_MARKS: Final = frozenset(",.:/-")
# Scripts written without spaces between words that are not East Asian wide.
_UNSPACED_SCRIPTS: Final = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x19E0, 0x19FF),  # Khmer symbols
    (0xAA60, 0xAA7F),  # Myanmar extended-A
)


def is_east_asian_wide(ch: str) -> bool:
    """Is this class of the model one East Asian wide or fullwidth character?"""
    return len(ch) == 1 and unicodedata.east_asian_width(ch) in _EAST_ASIAN_WIDE


def separates_words(ch: str) -> bool:
    """A letter or digit of a script that puts spaces between words (Latin, Greek, Cyrillic…)."""
    if len(ch) != 1 or not ch.isalnum() or unicodedata.east_asian_width(ch) in _EAST_ASIAN_WIDE:
        return False
    code = ord(ch)
    return not any(low <= code <= high for low, high in _UNSPACED_SCRIPTS)


def may_end_word(ch: str) -> bool:
    """May a word space follow this class of the model (a character, or a flag's two)? A
    currency sign may: "$ 10.000,00" is printed that way as often as "$10,000"."""
    if len(ch) != 1:
        return False
    return (
        separates_words(ch)
        or ch in _ENDS_WORD_MARKS
        or ch in _STANDALONE_MARKS
        or unicodedata.category(ch) in _ENDS_WORD_CATEGORIES
    )


def may_start_word(ch: str) -> bool:
    """May a word space precede this class of the model? A currency sign and a plus may: an
    amount or a phone number after a word ("EUR €12", "phone +44")."""
    return len(ch) == 1 and (
        separates_words(ch)
        or ch in _STARTS_WORD_MARKS
        or ch in _STANDALONE_MARKS
        or unicodedata.category(ch) in _STARTS_WORD_CATEGORIES
    )


@dataclass(frozen=True)
class CharacterClasses:
    """What the decoding rules need to know of each class of a model's character list."""

    ends_word: Flags  # a word space may follow it
    starts_word: Flags  # a word space may precede it
    is_f: Flags  # "f", the first glyph of the fi and fl ligatures
    ends_ligature: Flags  # "i" or "l", the second
    is_lower: Flags  # a lowercase letter
    is_upper: Flags  # an uppercase letter
    is_word: Flags  # a letter or digit of a script that spaces its words
    is_digit: Flags  # a decimal digit
    joins_digits: Flags  # a mark that sits inside a number, date or code: , . : / -
    groups_digits: Flags  # a thousands separator: ,
    is_letter: Flags  # a letter of any script
    is_minus: Flags  # a hyphen-minus, the sign of a negative number
    is_dash: Flags  # a hyphen-minus, an en dash or an em dash


@lru_cache(maxsize=8)
def classes_of(characters: tuple[str, ...]) -> CharacterClasses:
    """The classes of a model's character list (blank first), computed once per list."""

    def flags(test: Callable[[str], bool]) -> Flags:
        values = np.fromiter((test(ch) for ch in characters), dtype=bool, count=len(characters))
        values[BLANK] = False
        return values

    return CharacterClasses(
        ends_word=flags(may_end_word),
        starts_word=flags(may_start_word),
        is_f=flags(lambda ch: ch == "f"),
        ends_ligature=flags(lambda ch: ch in ("i", "l")),
        is_lower=flags(lambda ch: len(ch) == 1 and ch.islower()),
        is_upper=flags(lambda ch: len(ch) == 1 and ch.isupper()),
        is_word=flags(separates_words),
        is_digit=flags(lambda ch: len(ch) == 1 and ch.isdecimal()),
        joins_digits=flags(lambda ch: ch in _NUMBER_MARKS),
        groups_digits=flags(lambda ch: ch == ","),
        is_letter=flags(lambda ch: len(ch) == 1 and ch.isalpha()),
        is_minus=flags(lambda ch: ch == "-"),
        is_dash=flags(lambda ch: ch in DASHES),
    )
