"""Every threshold of the CTC decoding rules, in one table. How each was measured is in
docs/thresholds.md ("Decoding text lines"), each constant linking its section."""

from __future__ import annotations

from typing import Final

# Least p(space) in a blank column between two characters that makes it a word space.
SPACE_EVIDENCE: Final = 0.15  # docs/thresholds.md#word-spaces
# Least p(—) + p(–) + p(-) in a blank column between two letters that makes it a dash.
DASH_EVIDENCE: Final = 0.20  # docs/thresholds.md#dashes

# Least p(space) in a blank column inside a number, date or code (over the pitch too).
INSIDE_NUMBER_EVIDENCE: Final = 0.20  # docs/thresholds.md#spaces-inside-numbers
# Columns over the line's pitch after a comma between numbers that make the comma a list's.
LIST_GAP_COLUMNS: Final = 2  # docs/thresholds.md#list-commas
# Least p(space) after a list's comma one column over the pitch.
LIST_SPACE_EVIDENCE: Final = 0.10  # docs/thresholds.md#list-commas
# A gap inside a number this wide (half the line's height) needs only LIST_SPACE_EVIDENCE.
WIDE_GAP_COLUMNS: Final = 4  # docs/thresholds.md#wide-and-far-gaps
# A gap inside a number this wide (the line's height), and twice the pitch, needs ANY_BLANK.
FAR_GAP_COLUMNS: Final = 6  # docs/thresholds.md#wide-and-far-gaps
# Least p(space) in a FAR_GAP_COLUMNS gap inside a number under twice the pitch.
FAR_SPACE_EVIDENCE: Final = 0.005  # docs/thresholds.md#wide-and-far-gaps
# A blank column, whatever its p(space).
ANY_BLANK: Final = 1e-9  # docs/thresholds.md#wide-and-far-gaps
# Least p(space) in a blank column between a lowercase word (or a label's colon) and a digit.
NUMBER_SPACE_EVIDENCE: Final = 0.06  # docs/thresholds.md#a-number-after-a-word

# Least characters (spaces aside) a line needs before its columns can show a monospaced font.
MONOSPACED_CHARACTERS: Final = 12  # docs/thresholds.md#monospaced-lines
# The width in columns a monospaced line's character cell may have (least, most).
MONOSPACED_CELL_COLUMNS: Final = (2.3, 4.0)  # docs/thresholds.md#monospaced-lines
# How far, in cells, a monospaced line's characters may stand from the fitted grid.
MONOSPACED_FIT: Final = 0.25  # docs/thresholds.md#monospaced-lines
# On a monospaced line, a blank gap narrower than this many cells is no space.
MONOSPACED_SPACE_CELLS: Final = 1.5  # docs/thresholds.md#monospaced-lines

# Least p(digit), where a look-alike letter wins, that reads it as the digit in a number.
LOOKALIKE_EVIDENCE: Final = 0.10  # docs/thresholds.md#look-alike-digits
# The same inside a thousands group ("4,ooo"), whatever the rest of the token.
GROUP_LOOKALIKE_EVIDENCE: Final = 0.03  # docs/thresholds.md#look-alike-digits
# Least p(,), where a point wins before exactly three digits, that reads a comma: PP-OCRv5.
THOUSANDS_COMMA_EVIDENCE: Final = 0.10  # docs/thresholds.md#thousands-commas
# The same for PP-OCRv6.
PPOCRV6_THOUSANDS_COMMA_EVIDENCE: Final = 0.02  # docs/thresholds.md#thousands-commas
