"""An index's page lists read as lists: "string 27, 29", not "string 27,29".

A book's index sets each entry as a term and the pages it appears on, "surface 134, 135, 136",
with a word space after each comma. The recognizer reads most of those spaces, but not all: a
comma set close to the next page number, with no more room after it than a digit takes, gives
p(space) as low as 0.01 (idp.document.ocr.decoding), and where the next number has three
digits, "30,169" reads exactly like a thousands separator: one wrong token and two missing
ones. How often, and how the rule was set: docs/thresholds.md#index-lists.

The line alone cannot tell "30,169" from a count of 30,169; the page can. A page is an index
where at least INDEX_LINES of its lines end in a page list (a run of page numbers after the
term, with commas between them) and at least PRINTED_LISTS of those show the list as printed,
a comma and a space between numbers that ascend. On such a page, a comma with no space between
two numbers of a line's page list gets one where the numbers ascend, as an index's pages do.
A date is no page list: "Year Ended December 31, 2022", above each year of a financial table,
ends in two ascending numbers after a term, and with the table's own lines (split at its
column gutters, numbers after words) it would make the table's page an index.
Nothing else on any page changes: amounts, dates, codes and page lists of pages that are not
an index keep what the recognizer read. A word split in two keeps its confidence and takes its
share of the box by its characters (result.textract.json's WORD blocks).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from idp.contract.quads import is_vertical, quad_span
from idp.contract.results import Line, Word

INDEX_LINES: Final = 10
"""Least lines of a page that end in a page list for the page to be an index."""
PRINTED_LISTS: Final = 2
"""Least of them with a list printed as such ("22, 24"): a price list's lines end in numbers too,
but never in two numbers with a comma and a space between them."""

# A line's page list: page numbers (1-4 digits) with commas between them, ending the line,
# after a term or alone on the line (an entry's second line may hold only pages).
_PAGE_LIST: Final = re.compile(r"(?:^|(?<=\s))\d{1,4}(?:, ?\d{1,4})*$")
# A word of a page list.
_PAGE_LIST_WORD: Final = re.compile(r"\d{1,4}(?:,\d{1,4})*,?")
# Two numbers of a page list joined by a comma with no space (each pair of a run joined as one:
# "121,123,149"), and two printed as a list.
_JOINED: Final = re.compile(r"(?<!\d)(\d{1,4}),(?=(\d{1,4})(?!\d))")
_PRINTED: Final = re.compile(r"(\d{1,4}), (\d{1,4})")
# A date set as "December 31, 2022" or "Dec. 31, 2022" (a month's name or its abbreviation, a
# day, a year) at a line's end.
_DATE: Final = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November"
    r"|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.? \d{1,2}, ?\d{4}$",
    re.IGNORECASE,
)


def split_index_lists(lines: Sequence[Line]) -> list[Line]:
    """`lines`, with the joined pairs of their page lists spaced where the page is an index
    (module docstring)."""
    lists = [_page_list(line.text) for line in lines]
    printed = sum(any(int(a) < int(b) for a, b in _PRINTED.findall(tail)) for tail in lists if tail)
    if sum(tail is not None for tail in lists) < INDEX_LINES or printed < PRINTED_LISTS:
        return list(lines)
    return [_spaced(line) if tail else line for line, tail in zip(lines, lists, strict=True)]


def _page_list(text: str) -> str | None:
    """The page list that ends `text`, where what comes before it is a term: a table's row
    ("1.5 12 30") ends in numbers after a number."""
    text = text.rstrip()
    found = _PAGE_LIST.search(text)
    if found is None:
        return None
    term = text[: found.start()].rstrip()
    if term and (term[-1].isdigit() or _DATE.search(text)):
        return None
    return found.group()


def _cuts(text: str) -> list[int]:
    """Where in `text` a space goes: after each comma that joins two ascending numbers."""
    return [
        found.end() for found in _JOINED.finditer(text) if int(found.group(1)) < int(found.group(2))
    ]


def _spaced(line: Line) -> Line:
    text = line.text.rstrip()
    start = len(text) - len(_page_list(text) or "")
    cuts = [start + at for at in _cuts(text[start:])]
    if not cuts:
        return line
    spaced = " ".join(text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True))
    # The page list's words are the line's last ones.
    tail = len(line.words)
    while tail and _PAGE_LIST_WORD.fullmatch(line.words[tail - 1].text):
        tail -= 1
    vertical = is_vertical(line.box)
    words = [
        *line.words[:tail],
        *(part for word in line.words[tail:] for part in _split_word(word, vertical=vertical)),
    ]
    return line.model_copy(update={"text": spaced, "words": words})


def _split_word(word: Word, *, vertical: bool) -> list[Word]:
    """`word`, or its parts where it joins ascending page numbers, each with its share of the
    word's box by its characters."""
    cuts = _cuts(word.text)
    size = len(word.text)
    return [
        Word(
            text=word.text[a:b],
            box=quad_span(word.box, a / size, b / size, vertical=vertical),
            confidence=word.confidence,
        )
        for a, b in zip([0, *cuts], [*cuts, size], strict=True)
    ]
