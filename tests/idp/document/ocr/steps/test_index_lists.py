"""An index's page lists read as lists (idp.document.ocr.steps.index_lists).

The lines are built as the engine returns them, with their words' boxes. The joined pairs are
those PP-OCRv5 read on the Asymptote manual's index pages (benchmarks/held_out_numbers.py):
"string 27,29", "system 30,169", "surface 134, 135,136".
"""

from __future__ import annotations

from idp.contract.results import Line, Quad, Word
from idp.document.ocr.steps.index_lists import split_index_lists

H = 30
CHAR = 12  # px per character


def _box(x0: float, x1: float, y: float) -> Quad:
    return ((x0, y), (x1, y), (x1, y + H), (x0, y + H))


def line(text: str, y: float) -> Line:
    """A line of `text` at 40 px, each word CHAR px a character, one character apart."""
    words, x = [], 40.0
    for part in text.split():
        words.append(Word(text=part, box=_box(x, x + CHAR * len(part), y), confidence=0.9))
        x += CHAR * (len(part) + 1)
    return Line(text=text, box=_box(40, x - CHAR, y), confidence=0.95, words=words)


def page(texts: list[str]) -> list[Line]:
    return [line(text, 40 + 40 * row) for row, text in enumerate(texts)]


ENTRIES = [
    "slant 19",
    "sleep. 30",
    "slope 90, 91",
    "Spline 98, 150",
    "strftime. 29, 30",
    "stroke 17, 18",
    "struct 57",
    "subpath 34, 144",
    "substr 28",
    "tab completion 9",
]


def test_an_index_page_spaces_the_page_numbers_its_lists_joined() -> None:
    # GIVEN an index page: entries ending in page lists, several printed "90, 91", and three
    # the recognizer read joined
    lines = page(
        [
            *ENTRIES,
            "string 27,29",
            "system 30,169",
            "surface 134, 135,136, 150,151",
            "tension 121,123,149,150",
        ]
    )

    # WHEN its page lists are read
    read = split_index_lists(lines)

    # THEN the joined pairs are lists, and every other line is as read
    assert [one.text for one in read[-4:]] == [
        "string 27, 29",
        "system 30, 169",
        "surface 134, 135, 136, 150, 151",
        "tension 121, 123, 149, 150",
    ]
    assert read[:-4] == lines[:-4]
    # AND each word split keeps its confidence and takes its characters' share of the box
    system = read[-3]
    assert [word.text for word in system.words] == ["system", "30,", "169"]
    joined = lines[-3].words[1].box
    first, second = system.words[1].box, system.words[2].box
    assert first[0] == joined[0]
    assert second[1] == joined[1]
    assert first[1][0] == second[0][0] == joined[0][0] + 3 * CHAR
    assert {word.confidence for word in system.words} == {0.9}
    assert [word.text for word in read[-2].words] == [
        *("surface", "134,", "135,", "136,", "150,", "151"),
    ]
    assert [word.text for word in read[-1].words] == ["tension", "121,", "123,", "149,", "150"]


def test_a_page_that_is_no_index_keeps_its_numbers_as_read() -> None:
    # GIVEN a price list: every line ends in an amount, none in a printed list
    prices = page([f"item {n} 1,{n:03d}" for n in range(12)] + ["total 30,169"])
    # AND a table whose rows end in numbers after numbers, two of them printed as lists
    table = page([f"{n}.5 12 30,{n:03d}" for n in range(12)] + ["row 1, 2", "row 3, 4"])

    # WHEN their page lists are read THEN nothing changes
    assert split_index_lists(prices) == prices
    assert split_index_lists(table) == table


def test_a_financial_table_under_dated_headings_is_no_index() -> None:
    # GIVEN an annual report's table split at its column gutters, as the engine returns it: its
    # rows' cells end in numbers after words, and a heading above each year ends in a date
    cells = [f"Trial modifications {n}" for n in range(12)]
    rows = [f"{n + 1},{357 + n}" for n in range(12)]
    headings = [
        "Year Ended December 31, 2022",
        "Year Ended Dec. 31, 2021",
        "Year Ended DECEMBER 31,2020",
    ]
    table = page([*headings, *cells, *rows])

    # WHEN its page lists are read THEN its thousands stay as read
    assert split_index_lists(table) == table


def test_on_an_index_page_only_ascending_pages_at_a_line_end_are_split() -> None:
    # GIVEN an index page with a descending pair, a number inside a term, and a decimal
    lines = page([*ENTRIES, "scale 30,12", "1,000 islands 45", "pi 3.14,15"])

    # WHEN its page lists are read THEN none of those is a list
    assert split_index_lists(lines) == lines
