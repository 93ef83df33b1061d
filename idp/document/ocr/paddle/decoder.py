"""Word spaces and dashes the recognizer saw but did not write: a CTC decoder for PaddleOCR's
text recognition.

PaddleX decodes a text line by taking the most likely class of each output column (one column
per 8 px of the 48 px-high line image). At a narrow word gap the space class often loses that
vote to CTC's "blank" although the model gives it real weight: on the demo letter
"EUR including" has p(space) 0.23 in one column against 0.76 for blank, so the stock decoder
writes "EURincluding"; columns inside a word carry p(space) below 0.05. How often the space wins
depends on where the gap falls in the column grid, so the rendering scale moves the misses
around without removing them (1.5×: "VAT at20%", 2×: "VATat 20%", 2.5×: "221Baker").

`SpaceAwareCtcDecode` replaces the recognition model's post-processing (its `post_op`, the one
seam the library offers between the network's output and the text; the same for the Paddle and
the ONNX Runtime backends) and writes a space between two characters when all of these hold:

- the model wrote no space there and, in a blank column between them, p(space) ≥ 0.15;
- the two characters are at least the line's usual distance apart (the median distance between
  neighbouring characters not separated by a space): a word gap adds width, and narrower pairs
  are ligatures (fi, ff) or glyphs that touch;
- the characters may border a word space: letters and digits of scripts that separate words with
  spaces, a closing mark (, . ; : ! ? % and closing brackets) on the left or an opening bracket
  on the right, a form's check box, a bullet or a tick mark on either side. Chinese and
  Japanese (East Asian wide characters), Thai, Lao, Khmer, Myanmar and Tibetan never get one,
  nor does a gap before a comma or full stop, where Latin typography sets none. Korean (Hangul
  is East Asian wide) keeps the stock decoding;
- the gap does not follow an "fi" or "fl" before a lowercase letter: fonts that draw those as one
  ligature glyph leave a gap after it ("fi xed", "specifi cation", "fl oating" on real pages),
  and few words end in fi or fl. For the same reason a space the model itself wrote there is
  dropped ("fi lename", "defi nition", "effi cient").

Inside a number, date or code (a digit, or one of , . : / - after a digit, before a digit) the
blank column needs p(space) >= INSIDE_NUMBER_EVIDENCE (0.20), and the gap must also be wider
than the line's pitch: digits are set at one width, so a blank column a narrow "1" leaves
("1 7/03/2026") or one after a thousands comma is no word gap, while "NW1 6XE" and "+44 20 7946"
are a column wider. A space the model itself wrote there with its two sides closer than the
pitch is dropped ("11, 111.11"). On the demo letter and a page of dates, amounts, codes and
phone numbers (tests/documents/test_word_spacing.py), every space inside those numbers came from
such gaps, and every space between two numbers was at least a column wider. After a thousands
separator (a comma between a digit and a group of exactly three digits that ends the number) a
blank column is no evidence at all: on a 150-dpi scan "1,117,411.70" had a gap a column wider
than the pitch with p(space) 0.28 after its first comma; only a space the model wrote itself
stands there. Between a lowercase word and a number after it (the three characters before the
digit lowercase letters) p(space) >= NUMBER_SPACE_EVIDENCE (0.06) will do: PP-OCRv5 gives such
gaps 0.09-0.11 where it loses the space ("receipt771104"), while codes such as "x86" or "mp3"
keep the usual evidence. A comma between two numbers with a gap over the pitch after it, before
a group that cannot be thousands (or two columns over before any group), is a list's
("121, 123"): p(space) >= LIST_SPACE_EVIDENCE (0.10) will do there, and two columns over any
blank column will (R's printed vectors in a monospaced font, "272, 89, 407": p(space)
0.001-0.024 five columns after the comma, pitch 3); after a comma that cannot be a thousands
one, 0.20 at the pitch will ("46, 75"). Inside a number, 0.10 will do in a gap of
WIDE_GAP_COLUMNS (half the line's height: an axis's tick labels, "0 1 2 3") or right after a
whole date ("2003-03-07 08:42:38"), and in a gap of FAR_GAP_COLUMNS (the line's height) any
blank column will where the gap is also twice the pitch ("100 150"), and FAR_SPACE_EVIDENCE
(0.005) where it is not (R's monospaced "0 1 2 3"; a tiny label's "100", its digits scaled
that far apart, has 0.0002). A minus before a digit two columns over the pitch after a digit
starts a negative number whatever p(space) ("[4,] 1 -0.1" in a monospaced font, 0.003 there),
while a date's or a range's dash sits at the pitch, and after a letter it stays a code's
("AVX-512"). Where an index's page
list still reads joined ("27,29"), the page
tells it apart (idp.document.ocr.steps.index_lists). A currency sign may end or start a word,
and a plus start one ("$ 10.000,00", "phone +44").

The same happens to a dash set without spaces between two words ("recording—while", "meant—I"):
the model gives the dash classes real weight in a blank column and the stock decoder writes
"recordingwhile". Between two letters or digits of one line with nothing written between them,
a blank column where p(—) + p(–) + p(-) ≥ 0.20 is read as the likelier of those dashes. On the 31
pages of the real-document corpus (61,544 gaps between characters) that rule fires 7 times, each
at a dash the page prints; inside words the dash classes stay under 0.05.

Spaces calibrated on 25 real pages of the research corpus and the demo letter (46,214 gaps between
characters labelled with the ground truth; 248 word spaces the stock decoder dropped): the net
gain is flat for thresholds 0.15-0.25, and 0.15 keeps narrow word spaces such as the demo's
"NW1 6XE" (p = 0.20). On a line set in a monospaced font (its characters on a grid of cells,
`WordGaps._monospaced_cells`) a gap narrower than 1.5 cells is no space whatever p(space): code
printed without spaces ("pair a=(0,0);", p(space) 0.109 after the comma) gives its gaps the
evidence a proportional font's printed list does ("(0, 0.85, 0, 0)", 0.114), and only the grid
tells them apart. Where it still adds a wrong space: code after a full stop on a line with no
space the model wrote ("name. member"), kerned capitals ("FOR WARD"), camel-case names
("Linn Drum").
Everything else decodes exactly as PaddleX does (duplicates merged, blanks dropped, the same
per-character confidence); an inserted space or dash counts in the line's confidence at its
own probability.

Three more things only the columns show. On a line of no Chinese, Japanese or Korean, a
fullwidth form the model wrote ("，", "２") is read as its ASCII character (`HalfwidthForms`).
Inside a token that is mostly digits, a letter the
recognizer took for a look-alike digit (O/0, l/1, i/1, S/5, B/8) is read as that digit where the
digit holds p >= LOOKALIKE_EVIDENCE in the letter's column (`LookalikeDigits`). And while
`SpaceAwareCtcDecode.token_confidences` is open, each line's tokens keep the confidence of
their least sure character, which the engine puts on the line's words (`Word.confidence`): one
doubtful digit in an amount is lost in a line's mean, not in its token's minimum. In a token
that is mostly digits a digit's confidence counts its look-alike letters' probability too: a
receipt's "40" set in capitals gives "0" 0.6 and "O" 0.35, the same glyph, no doubt. Taking
the argmax once instead of PaddleX's argmax and max makes this decoder cheaper than the stock
one.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from idp.document.ocr.settings import SPACE_EVIDENCE

logger = logging.getLogger(__name__)

DASH_EVIDENCE: Final = 0.20
"""Least p(—) + p(–) + p(-) in a blank column between two letters that makes it a dash."""
DASHES: Final = ("—", "–", "-")  # em dash, en dash, hyphen-minus
INSIDE_NUMBER_EVIDENCE: Final = 0.20
"""Least p(space) in a blank column inside a number, date or code (besides being wider than the
line's pitch) that makes it a space. Where a line's characters are two columns apart, one more
column is within the columns' own jitter: a form's "DD Form 214." came out "2 14." with p(space)
0.153 in a blank three columns after the "2" (pitch 2), while the spaces a page prints between
numbers ("+44 20", "NW1 6XE") stand at 0.20-0.41."""
LIST_GAP_COLUMNS: Final = 2
"""How many columns wider than the line's pitch the gap after a comma between two numbers must
be to make the comma a list's ("37, 70"), not a thousands or decimal one. An index's page
lists ("121, 123, 149, 150") came out joined: p(space) 0.07-0.24 after those commas, and a
comma before exactly three digits was taken for a thousands separator."""
LIST_SPACE_EVIDENCE: Final = 0.10
"""Least p(space) after a list's comma one column over the line's pitch (two columns over:
any blank column). An index's page lists gave those gaps 0.12-0.42; R code's "c(0,1,0,1)",
printed without spaces, 0.02-0.099."""
WIDE_GAP_COLUMNS: Final = 4
"""A gap between two characters of a number at least this many columns wide (half the 48 px
line's height; digits of a number stand 2-4 columns apart) needs only LIST_SPACE_EVIDENCE and
no comparison with the pitch: an axis's tick labels ("0 1 2 3", p(space) 0.12-0.16) and R's
printed vectors ("1 2 4 3 5 6", 0.10-0.29) set every digit that far apart, so a line of them
has no narrower pitch to stand out from, while the 4-column gaps inside a census table's
numbers have p(space) 0.000."""
FAR_GAP_COLUMNS: Final = 6
"""A gap between two characters of a number at least this many columns wide (the 48 px line's
height) and twice the line's pitch is a space whatever p(space): no glyph of a number leaves
that much blank, while a plot's tick labels ("100 150", 12 columns apart on a pitch of 3;
Asymptote's "80 100", 10 on 3, p(space) 0.003) had p(space) 0.003-0.072 there. Under twice the
pitch it needs FAR_SPACE_EVIDENCE."""
FAR_SPACE_EVIDENCE: Final = 0.005
"""Least p(space) in a blank column of a FAR_GAP_COLUMNS gap inside a number, under twice the
line's pitch, that makes it a space. R's printed vectors set in a monospaced font ("0 1 2 3",
every digit 6-7 columns from the next, so the gaps are the pitch) had 0.015-0.072 there, while
a tiny axis label scaled up to the line's 48 px, a hydrograph's "100", left its digits six and
five columns apart with p(space) at most 0.0002 ("1 00" without this)."""
_ANY_BLANK: Final = 1e-9  # a blank column, whatever its p(space)
_DATE_END: Final = re.compile(r"(?<![\d.,/:-])(?:\d{4}-\d{2}-\d{2}|\d{1,2}[/.]\d{1,2}[/.]\d{4})$")
"""A whole date (2003-03-07, 17/03/2026, 7.3.2026) at the end of what a line has read so far: a
digit after it starts another token, and a gap over the pitch there needs only
LIST_SPACE_EVIDENCE. A data model's "2003-03-07 08:42:38" came out "2003-03-0708:42:38" with
p(space) 0.12 a column over the pitch: the geometry of the false "2 14." (0.153), so no width or
evidence tells them apart, only that a date's day has two digits and its year four."""
NUMBER_SPACE_EVIDENCE: Final = 0.06
"""Least p(space) in a blank column between a lowercase word and a digit that makes it a word
space: a number after a word is rarely part of it, and PP-OCRv5 gives such gaps 0.09-0.11 where
it loses the space ("receipt771104", "ref7731"); inside words the space class stays under 0.05."""

MONOSPACED_CHARACTERS: Final = 12
"""Least characters (spaces aside) a line needs before its columns can show it is set in a
monospaced font (`WordGaps._monospaced_cells`)."""
MONOSPACED_CELL_COLUMNS: Final = (2.3, 4.0)
"""The width in columns a monospaced line's character cell may have (its glyphs scaled to the
48 px line): under 2.3 columns one glyph and the next are too few columns apart for the grid to
show (a census table's "10,559,558" emits a character every two columns, its commas included);
over 4 the "cell" is a word's, not a character's (R's "0 1 2 3", a digit every 6-7 columns)."""
MONOSPACED_FIT: Final = 0.25
"""How far, in cells, a monospaced line's characters may stand from the fitted grid. Code
listings (Asymptote, R, ReportLab) of 12 characters or more stood within 0.13-0.25 of a cell;
lines set in a proportional font, on 17 pages of forms, invoices and papers, mostly 0.3 and
over (a word space is narrower than a letter, a comma narrower than a digit, and the shortfall
adds up along the line). The few that fit are two or three words with every space written
("modeling functions.", 0.19; "Form ETA-9142A", 0.25), so no gap is left there to judge."""
MONOSPACED_SPACE_CELLS: Final = 1.5
"""On a monospaced line a word space fills a cell of its own, so the two characters around it
stand two cells apart, and neighbours one: a blank gap narrower than 1.5 cells is no space."""

BLANK: Final = 0  # CTC blank: PaddleX puts it first in the model's character list
SPACE: Final = " "  # and the space last (use_space_char)

# Closing marks a word space may follow, and opening brackets one may precede, besides letters
# and digits (Unicode categories Pe/Ps cover brackets of every script, Sc currency signs). An
# ampersand stands as a word of its own as often as inside one ("Smith & Co", a LaTeX table's
# "0 & 1 &", read "0&1&" without it; "R&D" gives its gaps no evidence).
_ENDS_WORD_MARKS: Final = frozenset(",.;:!?%&")
_STARTS_WORD_MARKS: Final = frozenset("+&")
# Closing brackets and currency signs; opening brackets and currency signs.
_ENDS_WORD_CATEGORIES: Final = frozenset({"Pe", "Sc"})
_STARTS_WORD_CATEGORIES: Final = frozenset({"Ps", "Sc"})
_EAST_ASIAN_WIDE: Final = frozenset({"W", "F"})
# Marks that stand as a word of their own: a form's check boxes and radio buttons, bullets, tick
# marks. On IRS Form 1040 PP-OCRv5 read "a □3800 b □8801" and "a□Form(s)", p(space) 0.17-0.48
# in the gaps after the box and 0.40-0.49 before it, which a class rule had ruled out.
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

Int = npt.NDArray[np.intp]
Floats = npt.NDArray[np.floating[Any]]


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


Flags = npt.NDArray[np.bool_]

# Letters the recognizer mistakes for digits, and the digit each stands for.
# "i" for "1": a census total's last digit, "239,839,97i" (p(1) 0.43 behind p(i) 0.53).
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
LOOKALIKE_EVIDENCE: Final = 0.10
"""Least probability of the digit, in a column where a look-alike letter wins, that reads the
letter as that digit inside a token of digits."""
GROUP_LOOKALIKE_EVIDENCE: Final = 0.03
"""The same in a thousands group (a digit, a comma, then three digits or look-alike letters
that end the token: "4,ooo", "1,5oo"), whatever the rest of the token: PP-OCRv5 read a water
report's "4,000", "1,500" and "400,000" with their zeros as "o", p(0) 0.046-0.26 behind the
letter, while the "o" of words on the same lines had p(0) of at most 0.011."""
THOUSANDS_COMMA_EVIDENCE: Final = 0.10
"""Least p(,), in a column where a point wins between a digit and exactly three more, that
reads the point as a thousands comma (ThousandsCommas), for PP-OCRv5: a point printed there
left it p(,) up to 0.068 (an Argentine table's "165.134"), a comma it read as a point
0.054-0.49 (an annual report's "175,820" scanned at 200 dpi: 26 of its 99 numbers)."""
PPOCRV6_THOUSANDS_COMMA_EVIDENCE: Final = 0.02
"""The same for PP-OCRv6, whose printed points there left p(,) at most 0.0023 (368 read on 196
pages) and whose commas read as points 0.06-0.42: ten times the most a printed point left."""


@dataclass(frozen=True)
class _Classes:
    """What the decoder needs to know of each class of a model's character list."""

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
def _classes(characters: tuple[str, ...]) -> _Classes:
    def flags(test: Callable[[str], bool]) -> Flags:
        values = np.fromiter((test(ch) for ch in characters), dtype=bool, count=len(characters))
        values[BLANK] = False
        return values

    return _Classes(
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


def _emitted(best: Int) -> tuple[Int, Int]:
    """`best` flattened, and the flat indices of the columns where CTC emits a character (the
    first of a run of one class, not blank)."""
    classes = best.ravel()
    first = np.ones(best.shape, dtype=bool)
    first[:, 1:] = best[:, 1:] != best[:, :-1]
    return classes, np.flatnonzero(first.ravel() & (classes != BLANK))


class WordGaps:
    """Finds the word spaces a recognition model's character list allows, in its CTC output."""

    def __init__(self, characters: Sequence[str], *, threshold: float = SPACE_EVIDENCE) -> None:
        if not characters or characters[-1] != SPACE:
            raise ValueError("the model's character list does not end with the space class")
        self.space = len(characters) - 1
        self.threshold = threshold
        self._characters = tuple(characters)
        self._classes = _classes(self._characters)
        self._colon = characters.index(":") if ":" in characters else -1
        self._dashes = np.array([characters.index(d) for d in DASHES if d in characters])

    def dashes(self, best: Int, probs: Floats) -> tuple[Int, Int]:
        """Flat indices into `best` of the blank columns to be read as a dash, and the dash class
        of each: one per gap between two letters or digits of a line, where the dash classes
        together reach DASH_EVIDENCE; `probs` is the model's output (lines × columns × classes)."""
        none = np.empty(0, dtype=np.intp)
        if not self._dashes.size:
            return none, none
        width = best.shape[1]
        classes, emitted = _emitted(best)
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

    def columns(self, best: Int, space_prob: Floats, digits: Int | None = None) -> Int:
        """Flat indices into `best` (lines × columns, each column's most likely class) of the
        blank columns that are to be read as a space; `space_prob` is p(space) per column.
        `digits` is `best` with its look-alike letters read as digits (LookalikeDigits), for
        telling a thousands group: PP-OCRv5 read "122,000" as "122,0o0", and a comma before
        "0o0" looked like a list's ("122, 000")."""
        width = best.shape[1]
        classes, emitted = _emitted(best)
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
        pitch = self._pitch(line[adjacent], distance[adjacent])
        grouped = classes if digits is None else digits.ravel()
        thousands = self._thousands_groups(grouped, emitted, width)
        list_comma = self._list_commas(classes, emitted, width, distance, pitch, thousands)
        negative = self._negative_numbers(classes, emitted, width, distance, pitch) & adjacent
        range_dash = self._after_range_dash(classes, emitted, width)
        candidate = (
            adjacent
            & (distance >= 2)
            & (known.ends_word[left_class] | range_dash)
            & (known.starts_word[right_class] | negative)
            & ~self._after_ligature(classes, emitted, width)
            & ~(thousands & ~list_comma)
        )
        if not candidate.any():
            return np.empty(0, dtype=np.intp)
        evidence = np.where(classes == BLANK, space_prob.ravel(), 0.0)
        starts, ends = left[candidate] + 1, right[candidate]
        bounds = np.column_stack((starts, ends)).ravel()
        strongest = np.maximum.reduceat(evidence, bounds)[::2]
        # A number after a word: weaker evidence will do (PP-OCRv5 gives "receipt771104" 0.10);
        # inside a number, stronger evidence is needed.
        before_number = (
            self._word_before_number(classes, emitted, width)
            | self._label_before_number(classes, emitted, width)
        )[candidate]
        inside_number = (self._inside_number(classes, emitted, width) | range_dash)[candidate]
        needed = np.where(before_number, NUMBER_SPACE_EVIDENCE, self.threshold)
        needed = np.where(inside_number, max(self.threshold, INSIDE_NUMBER_EVIDENCE), needed)
        # A list's comma: weak evidence will do, and two columns over the pitch any blank column
        # will (the comma and a word space there). So will a gap half the line's height wide.
        wide_list = list_comma & (distance >= self._gap_pitch(line, pitch) + LIST_GAP_COLUMNS)
        needed = np.where(list_comma[candidate], LIST_SPACE_EVIDENCE, needed)
        needed = np.where(wide_list[candidate] | negative[candidate], _ANY_BLANK, needed)
        spread = inside_number & (distance[candidate] >= WIDE_GAP_COLUMNS)
        after_date = np.zeros(inside_number.size, dtype=bool)
        after_date[inside_number] = self._after_date(
            classes, emitted, width, np.flatnonzero(candidate)[inside_number]
        )
        needed = np.where(spread | after_date, np.minimum(needed, LIST_SPACE_EVIDENCE), needed)
        # A gap the line's height wide: a space on the least evidence, and on none at all where
        # it is also twice the line's pitch (a tiny label's digits, scaled up, stand as far
        # apart as its gap; R's monospaced vectors set every digit at the gap).
        far = inside_number & (distance[candidate] >= FAR_GAP_COLUMNS)
        clear = far & (distance[candidate] >= 2 * self._gap_pitch(line, pitch)[candidate])
        needed = np.where(far, np.minimum(needed, FAR_SPACE_EVIDENCE), needed)
        needed = np.where(clear, _ANY_BLANK, needed)
        strong = strongest >= needed
        if not strong.any():
            return np.empty(0, dtype=np.intp)
        chosen = np.flatnonzero(candidate)[strong]
        # Inside a number a gap must be wider than the line's pitch: digits are set at one
        # width, and the blank a narrow "1" leaves is no space ("1 7/03/2026"). After a comma
        # that is not a thousands one, the strong evidence asked there will do at the pitch
        # (an index's "46, 75": p(space) 0.39 two columns after the comma, pitch 2; a decimal
        # comma's gap, "10.000,00", stays under 0.05).
        inside = inside_number[strong]
        at_pitch = (distance[chosen] >= pitch[line[chosen]]) | spread[strong]
        over_pitch = (distance[chosen] > pitch[line[chosen]]) | spread[strong]
        after_comma = self._comma_between_digits(classes, emitted, width)[chosen]
        wide = np.where(inside & ~after_comma, over_pitch, at_pitch)
        # On a line set in a monospaced font a word space fills a cell of its own: a gap
        # narrower than MONOSPACED_SPACE_CELLS is none, whatever p(space) (Asymptote's code
        # "pair a=(0,0);": 0.109 a column over the pitch after the comma, 1.15 cells).
        cell = self._monospaced_cells(classes, emitted, width)[line[chosen]]
        wide &= (cell == 0) | (distance[chosen] >= MONOSPACED_SPACE_CELLS * cell)
        return np.array(
            [
                start + int(np.argmax(evidence[start:end]))
                for start, end in zip(starts[strong][wide], ends[strong][wide], strict=True)
            ],
            dtype=np.intp,
        )

    def _monospaced_cells(self, classes: Int, emitted: Int, width: int) -> Floats:
        """Per line: the width in columns of its character cell where the line is set in a
        monospaced font, 0 where it is not or its columns cannot tell. The characters of a
        monospaced line stand on a grid: each a whole number of cells from the first, one cell
        from its neighbour, two across a word space. The grid is fitted to the columns where
        a line of MONOSPACED_CHARACTERS or more emits its characters, with at least one space
        the model wrote (the characters around it two cells apart at least), and the line is
        monospaced where its cell is MONOSPACED_CELL_COLUMNS wide and every character stands
        within MONOSPACED_FIT of the grid."""
        line = emitted // width
        cells = np.zeros(int(line.max()) + 1 if line.size else 0, dtype=np.float64)
        written = classes[emitted] == self.space
        cuts = np.flatnonzero(np.diff(line)) + 1
        for columns, spaces in zip(np.split(emitted, cuts), np.split(written, cuts), strict=True):
            if columns.size:
                cells[columns[0] // width] = _monospaced_cell(columns, spaces)
        return cells

    def _list_commas(
        self,
        classes: Int,
        emitted: Int,
        width: int,
        distance: Int,
        pitch: Floats,
        thousands: Flags,
    ) -> Flags:
        """Per gap between emitted characters: is it after a comma that separates two numbers
        of a list ("37, 70", "121, 123, 149")? A comma after a digit, before a digit, with the
        gap wider than the line's pitch, before a group that cannot be thousands (not exactly
        three digits), or at least LIST_GAP_COLUMNS wider before any group: a thousands or
        decimal comma sits as close as any two digits, a list's comma has a word space after
        it."""
        gap_pitch = self._gap_pitch(emitted[:-1] // width, pitch)
        found: Flags = (
            self._comma_between_digits(classes, emitted, width)
            & (gap_pitch > 0)
            & ((distance >= gap_pitch + LIST_GAP_COLUMNS) | ((distance > gap_pitch) & ~thousands))
        )
        return found

    def _negative_numbers(
        self, classes: Int, emitted: Int, width: int, distance: Int, pitch: Floats
    ) -> Flags:
        """Per gap between emitted characters: does a negative number start after it ("1 -0.1")?
        A minus before a digit of its line, LIST_GAP_COLUMNS or more over the line's pitch after
        a digit: a dash inside a date, a range or a code ("2003-03-07", "10-20") sits at the
        pitch, a minus after a word space in a monospaced font a whole character further (R's
        printed matrices: "[4,] 1 -0.1 2.0", p(space) 0.001-0.003 there). After a letter a
        wide hyphen is a code's ("AVX-512" read by PP-OCRv6 with the hyphen that far out)."""
        known = self._classes
        line = emitted[:-1] // width
        found = np.zeros(line.size, dtype=bool)
        if line.size < 2:
            return found
        gap_pitch = self._gap_pitch(line, pitch)
        found[:-1] = (
            known.is_digit[classes[emitted[:-2]]]
            & known.is_minus[classes[emitted[1:-1]]]
            & known.is_digit[classes[emitted[2:]]]
            & (emitted[2:] // width == line[:-1])
        )
        found &= (gap_pitch > 0) & (distance >= gap_pitch + LIST_GAP_COLUMNS)
        return found

    def _after_date(self, classes: Int, emitted: Int, width: int, gaps: Int) -> Flags:
        """Per gap of `gaps` (indices of gaps between emitted characters): does a whole date end
        right before it on its line (_DATE_END)?"""
        found = np.zeros(gaps.size, dtype=bool)
        line = emitted // width
        for n, gap in enumerate(gaps):
            before = emitted[max(0, gap - 10) : gap + 1]
            text = "".join(self._characters[classes[e]] for e in before if e // width == line[gap])
            found[n] = _DATE_END.search(text) is not None
        return found

    def _after_range_dash(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Per gap between emitted characters: does it follow a dash that has a digit before it
        and a digit after the gap, all on one line ("1.36 - 1.41", a price range)? A space
        there needs the evidence and width asked inside a number: a date's or a code's dash
        sits at the pitch ("2026-03-17", "20-11-17")."""
        return self._after_mark_between_digits(self._classes.is_dash, classes, emitted, width)

    def _comma_between_digits(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Per gap between emitted characters: does it follow a comma that has a digit before
        it and a digit after the gap, all on one line?"""
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

    @staticmethod
    def _gap_pitch(line: Int, pitch: Floats) -> Floats:
        """Per gap, its line's pitch (0 on a line without one)."""
        gap_pitch = np.zeros(line.size, dtype=np.float64)
        known = line < pitch.size
        gap_pitch[known] = pitch[line[known]]
        return gap_pitch

    def _inside_number(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Per gap between emitted characters: is it inside a number, date or code? A digit
        before a digit ("1 7/03" is the blank a narrow "1" leaves), or a number mark that
        follows a digit before a digit ("11, 111.11"). The model's own spaces there are kept."""
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

    def _thousands_groups(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Per gap between emitted characters: is it after a thousands separator, a comma
        between a digit and a group of exactly three digits that ends the number
        ("1,117,411.70")? Such a gap is never a word space unless the model wrote one: a list
        of numbers ("17, 71") has groups of other lengths, or a written space."""
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
                and _group_ends_number(digit, line, gap + 1)
            )
        return found

    def _word_before_number(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Per gap between emitted characters: does a digit follow a lowercase word (its
        last three characters lowercase letters of the same line: "invoice3442", not "x86"
        or "mp3")?"""
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

    def _label_before_number(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Per gap between emitted characters: does a digit follow a label's colon (a word that
        starts with a capital, then the colon, then the digit, all on one line: "SIRET: 975…",
        "VAT/TIN: 2967…", "Approval: 1205…")? Such a gap takes a number after a word's weaker
        evidence: PP-OCRv6 gave the printed spaces after "SIRET :" p(space) 0.12-0.13 and read
        them joined. A lowercase word before a colon is a scheme printed tight against what
        follows ("doi:10.2307/1913610") and keeps the usual rule."""
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

    def number_spaces(self, best: Int) -> Int:
        """Flat indices into `best` of the space columns the model wrote inside a number where
        its two sides are closer than the line's pitch: "11, 111.11" with the two sides of the
        space nearer than any two characters of the line ("17, 71" and "+44 20" are wider); or
        no wider than the pitch after a comma, before a thousands group that ends the number
        ("5, 070")."""
        width = best.shape[1]
        classes, emitted = _emitted(best)
        if emitted.size < 3:
            return np.empty(0, dtype=np.intp)
        line = emitted // width
        written = classes[emitted] == self.space
        neighbours = ~written[:-1] & ~written[1:] & (line[:-1] == line[1:])
        # Per line its pitch; 0 (nothing is narrower) on a line without two neighbours.
        pitch = np.zeros(int(line.max()) + 1, dtype=np.float64)
        known_pitch = self._pitch(line[:-1][neighbours], np.diff(emitted)[neighbours])
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
        # After a thousands comma, a space no wider than the pitch is dropped too: PP-OCRv5
        # wrote one, p(space) 0.59, in the single column between a water report's "5," and
        # "070" (pitch 2), while a list's comma stands a word space further from its number.
        grouped = inside & known.groups_digits[classes[left]] & (right - left <= pitch[line[:-2]])
        digit = known.is_digit[classes[emitted]]
        for n in np.flatnonzero(grouped):
            grouped[n] = line[n + 2] == line[n] and _group_ends_number(digit, line, n + 2)
        hits = np.flatnonzero(inside & ((right - left < pitch[line[:-2]]) | grouped))
        return self._space_columns(classes, space[hits], right[hits])

    def ligature_spaces(self, best: Int) -> Int:
        """Flat indices into `best` of the space columns the model wrote right after an fi or
        fl and before a lowercase letter of the same line: the gap a ligature glyph leaves,
        which the model reads as a word space ("fi lename", "defi nition", "effi cient")."""
        width = best.shape[1]
        classes, emitted = _emitted(best)
        if emitted.size < 4:
            return np.empty(0, dtype=np.intp)
        tail, space, right = emitted[1:-2], emitted[2:-1], emitted[3:]
        hits = np.flatnonzero(
            self._ligature_ends(classes, emitted, width)[1:-2]
            & (classes[space] == self.space)
            & self._classes.is_lower[classes[right]]
            & (tail // width == right // width)
        )
        return self._space_columns(classes, space[hits], right[hits])

    def _space_columns(self, classes: Int, starts: Int, ends: Int) -> Int:
        """The space columns among each run of columns from `starts` up to `ends`."""
        if not starts.size:
            return np.empty(0, dtype=np.intp)
        columns: Int = np.concatenate([np.arange(a, b) for a, b in zip(starts, ends, strict=True)])
        written: Int = columns[classes[columns] == self.space]
        return written

    def _after_ligature(self, classes: Int, emitted: Int, width: int) -> Flags:
        """Per gap between emitted characters: does it follow an fi or fl and come before a
        lowercase letter?"""
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

    @staticmethod
    def _pitch(lines: Int, distances: Int) -> Floats:
        """Per line: the median distance between neighbouring characters (0 with fewer than 2)."""
        count = int(lines.max()) + 1 if lines.size else 0
        pitch = np.zeros(count, dtype=np.float64)
        order = np.argsort(lines, kind="stable")
        lines, distances = lines[order], distances[order]
        cuts = np.flatnonzero(np.diff(lines)) + 1
        for group, values in zip(np.split(lines, cuts), np.split(distances, cuts), strict=True):
            if values.size >= 2:
                pitch[group[0]] = float(np.median(values))
        return pitch


def _group_ends_number(digit: Flags, line: Int, start: int) -> bool:
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


def _monospaced_cell(columns: Int, spaces: Flags) -> float:
    """The cell width of one line's grid (see `WordGaps._monospaced_cells`), 0 where the line
    does not fit one; `columns` are where it emits its characters, `spaces` which are spaces."""
    characters = columns[~spaces]
    if characters.size < MONOSPACED_CHARACTERS:
        return 0.0
    distance = np.diff(characters)
    spaced = np.diff(np.cumsum(spaces)[~spaces]) > 0  # a written space between two characters
    if not spaced.any() or np.count_nonzero(~spaced) < 2:
        return 0.0
    cell = float(np.median(distance[~spaced]))
    least, most = MONOSPACED_CELL_COLUMNS
    if not least <= cell <= most:
        return 0.0
    for _ in range(2):  # the pitch's cell, then the fitted one
        steps = np.maximum(np.rint(distance / cell), np.where(spaced, 2.0, 1.0))
        index = np.concatenate(([0.0], np.cumsum(steps)))
        cell, offset = np.polyfit(index, characters.astype(np.float64), 1)
    off_grid = np.abs(characters - (offset + cell * index)).max()
    return float(cell) if least <= cell <= most and off_grid <= MONOSPACED_FIT * cell else 0.0


def _tokens(best_line: Int, space: int) -> list[Int]:
    """The columns where each whitespace-separated token of one decoded line emits its
    characters (the first column of each run of one class, blank and space left out)."""
    first = np.ones(best_line.shape, dtype=bool)
    first[1:] = best_line[1:] != best_line[:-1]
    emitted = np.flatnonzero(first & (best_line != BLANK))
    is_space = best_line[emitted] == space
    token = np.cumsum(is_space)[~is_space]  # per character: the spaces before it
    characters = emitted[~is_space]
    cuts = np.flatnonzero(np.diff(token)) + 1
    return [part for part in np.split(characters, cuts) if part.size]


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
        self._classes = _classes(tuple(characters))

    def numbers(self, best: Int) -> Iterator[tuple[int, Int]]:
        """(line, columns where it emits its characters) of each token of `best` that is mostly
        digits."""
        known = self._classes
        for line in range(best.shape[0]):
            for token in _tokens(best[line], self.space):
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
            for token in _tokens(best[line], self.space):
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
    apart: an Argentine table's "37,313" came out "37.313", an annual report's "175,820"
    "175.820". A point printed there (a European thousands point, "7.704", "17.233,37"; a
    three-place decimal, "3.000") leaves the comma far less. No comma read for a printed point
    there had the point that close behind, so the rule goes one way only."""

    def __init__(
        self, characters: Sequence[str], *, evidence: float = THOUSANDS_COMMA_EVIDENCE
    ) -> None:
        index = {ch: number for number, ch in enumerate(characters)}
        self.point, self.comma = index.get(".", -1), index.get(",", -1)  # -1: no such class
        self.evidence = evidence
        self.space = len(characters) - 1
        self._classes = _classes(tuple(characters))

    def swap(self, best: Int, probs: Floats) -> int:
        """Rewrite `best` (lines × columns) in place; the number of points read as commas."""
        if self.point < 0 or self.comma < 0:
            return 0
        is_digit = self._classes.is_digit
        swapped = 0
        for line in range(best.shape[0]):
            row = best[line]
            for token in _tokens(row, self.space):
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


class HalfwidthForms:
    """Reads a fullwidth form the recognizer wrote in a line of no Chinese, Japanese or Korean
    ("(13，5, 20，22", "0２4") as the ASCII character it stands for. The multilingual models
    carry both forms of every ASCII mark, digit and letter (U+FF01-FF5E), and now and then
    pick the fullwidth one on a Latin line: a code listing's "(13, 5, 20, 22, 37, 45, 19, 4)"
    came out with fullwidth commas, which no word-space rule takes for a comma, and its eight
    numbers as two tokens. A line with a character of those scripts keeps every form as read."""

    def __init__(self, characters: Sequence[str]) -> None:
        index = {ch: number for number, ch in enumerate(characters)}
        plain = np.arange(len(characters))
        for ch, number in index.items():
            if len(ch) == 1 and 0xFF01 <= ord(ch) <= 0xFF5E:
                plain[number] = index.get(unicodedata.normalize("NFKC", ch), number)
        self.plain = plain
        self.fullwidth = plain != np.arange(len(characters))
        wide = np.fromiter(
            (
                len(ch) == 1 and unicodedata.east_asian_width(ch) in _EAST_ASIAN_WIDE
                for ch in characters
            ),
            dtype=bool,
            count=len(characters),
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


class SpaceAwareCtcDecode:
    """Drop-in for PaddleX's CTCLabelDecode (a text recognition model's `post_op`) that also
    writes the word spaces and dashes `WordGaps` finds, and drops a space the model wrote after a
    ligature. `base` is the model's own decoder: it keeps the character list and turns the
    column classes into text (and word boxes when asked)."""

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
        a text read twice keeps the lower of each."""
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
            tokens = _tokens(best[line], self.gaps.space)
            text = "".join(self.character[c] for token in tokens for c in best[line][token])
            if text != read[0].replace(SPACE, ""):  # a model that reverses its text (Arabic)
                continue
            lowest = [float(confidence[line][token].min()) for token in tokens]
            known = record.get(read[0])
            record[read[0]] = lowest if known is None else list(map(min, known, lowest))

    def __call__(
        self, pred: Sequence[Any], return_word_box: bool = False, **kwargs: Any
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


def _recognizer(pipeline: Any) -> Any:
    paddlex = pipeline.paddlex_pipeline
    ocr = getattr(paddlex, "general_ocr_pipeline", paddlex)  # PP-StructureV3 nests its OCR
    return ocr.text_rec_model


def thousands_comma_evidence_for(recognition_model: str) -> float:
    """The least p(,) that reads a point in thousands place as a comma, for the recognition
    model of that name: its own calibration."""
    if recognition_model.startswith("PP-OCRv6_"):
        return PPOCRV6_THOUSANDS_COMMA_EVIDENCE
    return THOUSANDS_COMMA_EVIDENCE


def install_space_decoder(
    pipeline: Any,
    *,
    recognition_model: str,
    threshold: float = SPACE_EVIDENCE,
    lookalike_digits: bool = True,
) -> None:
    """Decode the text recognition of a paddleocr pipeline (PaddleOCR or PPStructureV3), whose
    recognizer is `recognition_model`, with `SpaceAwareCtcDecode`. Idempotent."""
    recognizer = _recognizer(pipeline)
    base = recognizer.post_op
    if isinstance(base, SpaceAwareCtcDecode):
        base = base.base
    recognizer.post_op = SpaceAwareCtcDecode(
        base,
        threshold=threshold,
        lookalike_digits=lookalike_digits,
        thousands_comma_evidence=thousands_comma_evidence_for(recognition_model),
    )
    logger.debug("word spaces: p(space) >= %s decoded on %s", threshold, type(recognizer).__name__)


def space_decoder_of(pipeline: Any) -> SpaceAwareCtcDecode | None:
    """The pipeline's `SpaceAwareCtcDecode`, where one is installed."""
    post_op = _recognizer(pipeline).post_op
    return post_op if isinstance(post_op, SpaceAwareCtcDecode) else None
