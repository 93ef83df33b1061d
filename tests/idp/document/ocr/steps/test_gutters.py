"""Lines a detector ran across a column gutter are split there (idp.document.ocr.steps.gutters).

The pages are built as the engine returns them: lines with their words' boxes, 30 px tall, on a
1224-px-wide page whose two columns meet at a gutter around x = 612. The real page this guards
(pdfannots-hotos17__p1, read by PP-OCRv6 small at 59.7 % order-sensitive CER without it and
4.4 % with it) is in docs/benchmarks.md's real-document figures.
"""

from __future__ import annotations

from idp.contract.results import Line, Quad, Word
from idp.document.ocr.steps.gutters import split_at_gutters
from idp.document.ocr.steps.reading_order import read_in_order

H = 30
W, PAGE_H = 1224, 1584


def _box(x0: float, x1: float, y: float) -> Quad:
    return ((x0, y), (x1, y), (x1, y + H), (x0, y + H))


def line(words: list[tuple[str, float, float]], y: float) -> Line:
    """A line of words (text, left, right), its box around them."""
    return Line(
        text=" ".join(text for text, _, _ in words),
        box=_box(words[0][1], words[-1][2], y),
        confidence=0.99,
        words=[Word(text=text, box=_box(x0, x1, y)) for text, x0, x1 in words],
    )


def prose(prefix: str, x: float, count: int, gap: float = 8) -> list[tuple[str, float, float]]:
    """`count` words of 60 px from x, one word space apart."""
    return [(f"{prefix}{i}", x + i * (60 + gap), x + i * (60 + gap) + 60) for i in range(count)]


def merged(row: int, y: float, gutter_left: float = 590, gutter_right: float = 630) -> Line:
    """A left-column line and a right-column line the detector joined at the gutter."""
    left = prose(f"L{row}w", gutter_left - 7 * 68 + 8, 7)
    right = prose(f"R{row}w", gutter_right, 7)
    return line(left + right, y)


def test_lines_joined_across_a_gutter_are_split_there_and_read_column_by_column() -> None:
    # GIVEN a title across the page (no wide space), then six rows where each column's line was
    # joined with the other's across the gutter
    title = line(prose("T", 300, 9), 60)
    rows = [merged(row, 150 + row * 45) for row in range(6)]
    # WHEN the lines are split at gutters
    lines = split_at_gutters([title, *rows])
    # THEN each joined line is two, at the gutter, and the title is whole
    assert len(lines) == 1 + 12
    assert lines[0] == title
    assert [part.text.split()[0] for part in lines[1:3]] == ["L0w0", "R0w0"]
    assert lines[1].box[1][0] < 600 < lines[2].box[0][0]
    assert all(len(part.words) == 7 for part in lines[1:])
    # AND reading order then reads the left column before the right
    text = [ordered.text for ordered in read_in_order(lines, W, PAGE_H).lines]
    left = [index for index, value in enumerate(text) if value.startswith("L")]
    right = [index for index, value in enumerate(text) if value.startswith("R")]
    assert max(left) < min(right)


def test_wide_spaces_that_do_not_line_up_on_enough_lines_are_left_alone() -> None:
    # GIVEN justified lines whose wide spaces fall at different places, and three joined lines
    # (fewer than a gutter needs)
    scattered = [
        line(prose("a", 40, 4) + prose("b", 40 + 4 * 68 + 20 + shift, 4), 100 + i * 45)
        for i, shift in enumerate((0, 80, 160, 240))
    ]
    few = [merged(row, 400 + row * 45) for row in range(3)]
    lines = [*scattered, *few]
    # THEN nothing is split
    assert split_at_gutters(lines) == lines


def test_a_gutter_most_crossing_lines_bridge_without_a_space_is_not_one() -> None:
    # GIVEN four lines with a wide space at one place, among eight full-width lines that cross
    # it with ordinary word spaces (a wide space there is chance, not a gutter)
    full = [line(prose("f", 300, 10), 100 + i * 45) for i in range(8)]
    gapped = [merged(row, 500 + row * 45, 640, 680) for row in range(4)]
    lines = [*full, *gapped]
    assert split_at_gutters(lines) == lines


def test_lines_without_word_boxes_are_kept() -> None:
    plain = [
        Line(text="left and right", box=_box(40, 1180, 100 + i * 45), confidence=0.9)
        for i in range(6)
    ]
    assert split_at_gutters(plain) == plain


def test_word_spaces_that_line_up_on_a_one_column_page_are_not_a_gutter() -> None:
    # GIVEN a one-column letter as PP-OCRv6's coarse word boxes measure it: each line's first word
    # ("Invoice", "Meeting", "Samples", … all about as long) is followed by a space 0.73 line
    # heights wide, standing one above the other, while the line's other spaces are 0.57
    first_words = [
        line([("First", 100, 205), *prose(f"w{row}", 227, 8, gap=17)], 100 + row * 45)
        for row in range(6)
    ]
    # WHEN the lines are split at gutters
    # THEN none is: a space no wider than 1.5 of the line's own word spaces is a word space
    assert split_at_gutters(first_words) == first_words
