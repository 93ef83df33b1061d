"""Reading order for PP-OCRv5 pages (idp.document.ocr.steps.reading_order).

The layout tests build a page's lines as PP-OCRv5 returns them (a 4-point box per line on a US
letter page rendered at 2×), often shuffled, and read each line's first word back in the
order given. The engine test reads a real two-column page with real PP-OCRv5 on the offline
weights: samples/two-columns-tale-of-two-cities.png (public domain, samples/README.md).
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from rapidfuzz.distance import Levenshtein

from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.contract.results import Line, Quad, Rotation
from idp.document.ocr.engine import PageContent
from idp.document.ocr.models.cache import ModelCache
from idp.document.ocr.pipeline import ocr_document
from idp.document.ocr.registry import EngineRegistry
from idp.document.ocr.settings import EngineSettings
from idp.document.ocr.steps.geometry import content_on_original
from idp.document.ocr.steps.reading_order import ReadingOrder, read_in_order
from tests.paths import SAMPLES

TWO_COLUMNS = SAMPLES / "two-columns-tale-of-two-cities.png"
W, H = 1224, 1584  # US letter at 2×
LH, GAP = 26, 10  # line height, gap between lines
PROSE = "lorem ipsum dolor sit amet consectetur adipiscing"


def line(text: str, x0: float, y0: float, x1: float, y1: float) -> Line:
    return Line(text=text, box=((x0, y0), (x1, y0), (x1, y1), (x0, y1)), confidence=0.99)


def column(prefix: str, x0: float, x1: float, y: float, n: int, lh: float = LH) -> list[Line]:
    """n lines of running text, the last one short as a paragraph's last line is."""
    out = []
    for k in range(n):
        right = x0 + (x1 - x0) * 0.55 if k == n - 1 else x1
        out.append(line(f"{prefix}{k} {PROSE}", x0, y, right, y + lh))
        y += lh + GAP
    return out


def ids(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{k}" for k in range(n)]


def read(lines: list[Line], width: int = W, height: int = H) -> ReadingOrder:
    return read_in_order(lines, width, height)


def words(page: ReadingOrder) -> list[str]:
    """The first word of each line, in the order read."""
    return [line.text.split()[0] for line in page.lines]


def shuffled(lines: list[Line], seed: int) -> list[Line]:
    random.Random(seed).shuffle(lines)
    return lines


def turned(lines: list[Line], degrees: float) -> list[Line]:
    """The lines of a page scanned `degrees` askew."""
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))

    def turn(x: float, y: float) -> tuple[float, float]:
        dx, dy = x - W / 2, y - H / 2
        return (W / 2 + c * dx - s * dy, H / 2 + s * dx + c * dy)

    return [
        line.model_copy(update={"box": tuple(turn(x, y) for x, y in line.box)}) for line in lines
    ]


# ---- columns ---------------------------------------------------------------------------------
def test_two_columns_are_read_one_after_the_other() -> None:
    # GIVEN two columns whose lines share rows, in any order
    lines = shuffled(column("A", 80, 590, 150, 35) + column("B", 634, 1144, 150, 35), seed=1)

    # WHEN the page is read
    page = read(lines)

    # THEN the left column is read top to bottom, then the right
    assert words(page) == ids("A", 35) + ids("B", 35)


def test_three_columns_are_read_left_to_right() -> None:
    # GIVEN three columns, the last one shorter
    lines = (
        column("A", 60, 400, 150, 30)
        + column("B", 430, 770, 150, 30)
        + column("C", 800, 1140, 150, 28)
    )

    # WHEN the page is read
    page = read(lines)

    # THEN each column is read whole, left to right
    assert words(page) == ids("A", 30) + ids("B", 30) + ids("C", 28)


def test_columns_with_offset_baselines_and_uneven_length_stay_apart() -> None:
    # GIVEN two columns whose baselines do not line up and whose lengths differ
    lines = column("A", 80, 590, 150, 35) + column("B", 634, 1144, 163, 20)

    # WHEN the page is read
    page = read(lines)

    # THEN the columns are still read one after the other
    assert words(page) == ids("A", 35) + ids("B", 20)


def test_a_right_column_starting_higher_is_still_read_second() -> None:
    # GIVEN a right column that starts well above the left one
    lines = column("A", 80, 590, 400, 25) + column("B", 634, 1144, 150, 32)

    # WHEN the page is read
    page = read(lines)

    # THEN the left column still comes first
    assert words(page) == ids("A", 25) + ids("B", 32)


def test_a_heading_spanning_the_columns_is_read_before_them() -> None:
    # GIVEN a title and an author line centred over two columns
    lines = [
        line("Title of the paper", 350, 100, 870, 150),
        line("Author Name, Place", 450, 165, 770, 190),
        *column("A", 80, 590, 240, 30),
        *column("B", 634, 1144, 240, 30),
    ]

    # WHEN the page is read
    page = read(lines)

    # THEN the title and author come first, the title as a heading, then the columns
    assert words(page) == ["Title", "Author", *ids("A", 30), *ids("B", 30)]
    assert page.blocks[0].type == "heading"
    assert page.blocks[0].text == "Title of the paper"


def test_a_full_width_caption_between_columns_is_read_in_place() -> None:
    # GIVEN two columns, a caption across the page, then two more columns
    lines = [
        *column("A", 80, 590, 150, 12),
        *column("B", 634, 1144, 150, 12),
        line("Figure 1: a caption that spans the page width below a figure", 80, 700, 1144, 726),
        *column("C", 80, 590, 780, 12),
        *column("D", 634, 1144, 780, 12),
    ]

    # WHEN the page is read
    page = read(lines)

    # THEN the columns above, the caption, then the columns below
    assert words(page) == ids("A", 12) + ids("B", 12) + ["Figure"] + ids("C", 12) + ids("D", 12)


def test_a_full_width_section_after_the_columns_is_not_read_in_the_left_column() -> None:
    # GIVEN two columns, then full-width bullets whose short second lines clear the gutter
    lines = column("A", 80, 590, 150, 20) + column("B", 634, 1144, 150, 20)
    y = 150 + 20 * 36 + 40
    lines.append(line("Additional Features", 80, y, 360, y + LH))
    y += 50
    for k in range(6):
        lines.append(line(f"C{k}a {PROSE} {PROSE}", 80, y, 1144, y + LH))
        lines.append(line(f"C{k}b short tail", 100, y + 36, 400, y + 36 + LH))
        y += 72

    # WHEN the page is read
    page = read(lines)

    # THEN the section follows both columns
    section = ["Additional"] + [f"C{k}{part}" for k in range(6) for part in "ab"]
    assert words(page) == ids("A", 20) + ids("B", 20) + section


def test_a_line_merged_across_a_narrow_gutter_does_not_break_the_columns() -> None:
    # GIVEN two columns where the recognizer read one row as a single line across the gutter
    left, right = column("A", 80, 590, 150, 30), column("B", 634, 1144, 150, 30)
    merged = line(f"A12+B12 {PROSE}", 80, left[12].box[0][1], 1144, left[12].box[2][1])
    lines = [*left[:12], *left[13:], *right[:12], *right[13:], merged]

    # WHEN the page is read
    page = read(lines)

    # THEN the merged line is read in the column it starts in, and the columns stay whole
    rest_a, rest_b = ids("A", 30)[13:], ids("B", 30)[13:]
    assert words(page) == [*ids("A", 12), "A12+B12", *rest_a, *ids("B", 12), *rest_b]


def test_bullets_and_bars_in_the_gutter_do_not_hide_it() -> None:
    # GIVEN two columns with bullets left of the text and stray bars in the gutter
    lines = column("A", 110, 590, 150, 30) + column("B", 634, 1144, 150, 30)
    lines += [line("•", 80, 150 + k * 36, 96, 150 + k * 36 + LH) for k in (0, 5, 9)]
    lines += [line("|", 605, 150 + k * 36, 615, 150 + k * 36 + LH) for k in (3, 4, 20)]

    # WHEN the page is read
    page = read(lines)

    # THEN the columns are read one after the other, each bullet right before its line
    read_words = words(page)
    assert [w for w in read_words if w not in ("•", "|")] == ids("A", 30) + ids("B", 30)
    assert read_words.index("•") == read_words.index("A0") - 1


# ---- header, footer, headings ----------------------------------------------------------------
def test_header_and_footer_are_read_first_and_last() -> None:
    # GIVEN a running header, two columns and a page number in the bottom margin
    lines = [
        line("Journal of Things", 80, 40, 400, 66),
        line("Page 3", 1000, 40, 1144, 66),
        *column("A", 80, 590, 150, 35),
        *column("B", 634, 1144, 150, 35),
        line("- 3 -", 580, 1520, 640, 1546),
    ]

    # WHEN the page is read
    page = read(lines)

    # THEN the header comes first, the footer last, each a block of its own
    assert words(page) == ["Journal", "Page", *ids("A", 35), *ids("B", 35), "-"]
    assert (page.blocks[0].type, page.blocks[-1].type) == ("header", "footer")


def test_section_headings_at_the_top_of_columns_are_not_a_header() -> None:
    # GIVEN three columns, each opening with a section heading near the top of the page
    lines = []
    for c, x0 in enumerate((60, 430, 800)):
        lines.append(line(f"H{c} Section title", x0, 40, x0 + 250, 40 + LH))
        lines += column("ABC"[c], x0, x0 + 340, 40 + LH + 20, 30)

    # WHEN the page is read
    page = read(lines)

    # THEN each heading is read at the top of its own column
    assert words(page) == ["H0", *ids("A", 30), "H1", *ids("B", 30), "H2", *ids("C", 30)]
    assert page.blocks[0].type != "header"


# ---- one column ------------------------------------------------------------------------------
def test_a_single_column_is_read_top_to_bottom() -> None:
    # GIVEN one column of text
    lines = shuffled(column("A", 100, 1100, 150, 30), seed=4)

    # WHEN the page is read
    page = read(lines)

    # THEN its lines come top to bottom
    assert words(page) == ids("A", 30)


def test_paragraphs_are_split_at_a_larger_gap() -> None:
    # GIVEN two paragraphs set apart by a wider gap
    lines = column("A", 100, 1100, 150, 5) + column("B", 100, 1100, 150 + 5 * 36 + 30, 6)

    # WHEN the page is read
    page = read(lines)

    # THEN they are two blocks
    assert [len(block.lines) for block in page.blocks] == [5, 6]


def test_paragraphs_are_split_at_a_first_line_indent() -> None:
    # GIVEN three paragraphs set solid, each opening with an indent
    lines = []
    y = 150
    for prefix, n in (("A", 4), ("B", 5), ("C", 3)):
        for k in range(n):
            lines.append(
                line(
                    f"{prefix}{k} {PROSE}",
                    140 if k == 0 else 100,
                    y,
                    1100 if k < n - 1 else 700,
                    y + LH,
                )
            )
            y += LH + GAP

    # WHEN the page is read
    page = read(lines)

    # THEN each paragraph is a block
    assert [len(block.lines) for block in page.blocks] == [4, 5, 3]


# ---- tables and forms ------------------------------------------------------------------------
def test_a_table_is_read_row_by_row() -> None:
    # GIVEN a 4-column table of short cells, in any order
    cells = [(100, 380), (420, 560), (640, 760), (860, 1000)]
    lines = []
    for r in range(8):
        y = 150 + r * 50
        for c, (x0, x1) in enumerate(cells):
            lines.append(
                line(f"r{r}c{c}", x0, y, x0 + (x1 - x0) * (0.5 + 0.1 * ((r + c) % 4)), y + LH)
            )

    # WHEN the page is read
    page = read(shuffled(lines, seed=2))

    # THEN it is one table block, read row by row, cells left to right
    assert words(page) == [f"r{r}c{c}" for r in range(8) for c in range(4)]
    assert [block.type for block in page.blocks] == ["table"]


def test_a_table_between_paragraphs_is_read_in_place() -> None:
    # GIVEN a paragraph, a key/value table, then another paragraph
    lines = column("A", 100, 1100, 150, 4)
    for r in range(5):
        y = 330 + r * 40
        lines += [line(f"k{r} 123", 100, y, 300, y + LH), line(f"v{r} 4.5", 600, y, 700, y + LH)]
    lines += column("B", 100, 1100, 560, 4)

    # WHEN the page is read
    page = read(lines)

    # THEN paragraph, table row by row, paragraph
    rows = [w for r in range(5) for w in (f"k{r}", f"v{r}")]
    assert words(page) == ids("A", 4) + rows + ids("B", 4)
    assert [block.type for block in page.blocks] == ["paragraph", "table", "paragraph"]


def test_a_wrapped_cell_is_read_whole_within_its_row() -> None:
    # GIVEN table rows whose middle cell wraps onto two lines beside one-line cells
    lines = []
    y = 200
    for r in range(6):
        lines += [
            line(f"n{r}", 100, y + 18, 160, y + 18 + LH),
            line(f"d{r}a wrapped", 300, y, 600, y + LH),
            line(f"d{r}b cell", 300, y + 36, 500, y + 36 + LH),
            line(f"q{r}", 800, y + 18, 860, y + 18 + LH),
        ]
        y += 110

    # WHEN the page is read
    page = read(lines)

    # THEN each row is read left to right with the wrapped cell's lines together
    assert words(page) == [w for r in range(6) for w in (f"n{r}", f"d{r}a", f"d{r}b", f"q{r}")]


def test_a_form_keeps_each_label_beside_its_value() -> None:
    # GIVEN a sparse form of label: value pairs, two pairs to a row, in any order
    rows = [
        ("Name:", "John Smith", "Date:", "2024-01-01"),
        ("Address:", "1 Main Street", "Phone:", "555-0100"),
        ("City:", "Springfield", "Zip:", "12345"),
        ("Employer:", "ACME Corp", "Title:", "Engineer"),
    ]
    lines = []
    for r, row in enumerate(rows):
        y = 200 + r * 120
        for text, x0 in zip(row, (100, 330, 700, 860), strict=True):
            lines.append(line(text, x0, y, x0 + 18 * len(text), y + LH))

    # WHEN the page is read
    page = read(shuffled(lines, seed=3))

    # THEN it reads row by row: label, value, label, value
    assert [line.text for line in page.lines] == [text for row in rows for text in row]


def test_a_key_value_table_in_the_left_column_stays_in_it() -> None:
    # GIVEN a left column opening with a key/value table, and a right column of text
    lines = []
    for r in range(10):
        y = 150 + r * 36
        lines += [line(f"k{r} key text", 80, y, 300, y + LH), line(f"v{r}", 460, y, 520, y + LH)]
    lines += column("P", 80, 590, 150 + 10 * 36 + 30, 10)
    lines += column("B", 634, 1144, 150, 30)

    # WHEN the page is read
    page = read(lines)

    # THEN the table row by row, the rest of the left column, then the right column
    table = [w for r in range(10) for w in (f"k{r}", f"v{r}")]
    assert words(page) == table + ids("P", 10) + ids("B", 30)


def test_two_tables_side_by_side_with_headings_are_read_half_by_half() -> None:
    # GIVEN a reference card: each half a table of description / syntax rows under headings,
    # the halves sharing a row pitch
    lines = []
    expected = []
    for half, x0 in enumerate((60, 640)):
        y = 100 + 13 * half
        for section in range(3):
            lines.append(line(f"S{half}{section} Heading", x0, y, x0 + 260, y + 34))
            expected.append(f"S{half}{section}")
            y += 44
            for r in range(6):
                key, value = f"k{half}{section}{r}", f"v{half}{section}{r}()"
                lines.append(line(f"{key} description text", x0, y, x0 + 300, y + LH))
                lines.append(line(value, x0 + 380, y, x0 + 520, y + LH))
                expected += [key, value]
                y += 34

    # WHEN the page is read
    page = read(lines)

    # THEN the left half is read whole before the right
    assert words(page) == expected


# ---- skew, scripts, edge cases ---------------------------------------------------------------
@pytest.mark.parametrize("degrees", [-1.0, 0.5, 1.0])
def test_a_skewed_scan_is_read_as_if_straight(degrees: float) -> None:
    # GIVEN a title over two columns, scanned slightly askew
    lines = [line("Title of the paper", 350, 100, 870, 150)]
    lines += column("A", 80, 590, 240, 30) + column("B", 634, 1144, 240, 30)

    # WHEN the page is read
    page = read(turned(lines, degrees))

    # THEN the columns are still read one after the other
    assert words(page) == ["Title", *ids("A", 30), *ids("B", 30)]


def test_vertical_cjk_text_keeps_the_engine_order() -> None:
    # GIVEN a page of vertical Japanese columns, as the engine returns them
    lines = [line("縦書きの文章", 1000 - 60 * k, 100, 1040 - 60 * k, 600) for k in range(8)]

    # WHEN the page is read
    page = read(lines)

    # THEN the order is the engine's, as one vertical block
    assert page.lines == lines
    assert [(block.type, block.lines) for block in page.blocks] == [("vertical", list(range(8)))]


def test_right_to_left_text_keeps_the_engine_order() -> None:
    # GIVEN a two-column Hebrew page, as the engine returns its lines
    hebrew = "שלום עולם טקסט בעברית ארוך מספיק"
    lines = [line(f"{hebrew} {k}", 80, 150 + k * 36, 590, 176 + k * 36) for k in range(20)]
    lines += [line(f"{hebrew} {k}", 634, 150 + k * 36, 1144, 176 + k * 36) for k in range(20)]

    # WHEN the page is read
    page = read(lines)

    # THEN the order is the engine's, as one right-to-left block
    assert page.lines == lines
    assert [block.type for block in page.blocks] == ["right_to_left"]


def test_an_empty_page_has_no_lines_and_no_blocks() -> None:
    # GIVEN a page where nothing was read
    # WHEN it is read
    page = read([])

    # THEN there is nothing to order
    assert (page.lines, page.blocks) == ([], [])


def test_a_single_line_is_one_paragraph() -> None:
    # GIVEN a page of one line
    only = line("only line", 10, 10, 200, 40)

    # WHEN it is read
    page = read([only])

    # THEN it is one paragraph holding that line
    assert page.lines == [only]
    assert [(block.type, block.lines, block.text) for block in page.blocks] == [
        ("paragraph", [0], "only line")
    ]


def test_degenerate_boxes_are_kept() -> None:
    # GIVEN empty and inverted boxes (x0, y0, x1, y1) among ordinary lines
    degenerate = {"a": (10, 10, 10, 10), "b": (10, 10, 10, 10), "c": (100, 100, 90, 95)}
    lines = [line(text, *bounds) for text, bounds in degenerate.items()]
    lines += column("A", 80, 590, 150, 5)

    # WHEN the page is read
    page = read(lines)

    # THEN every line is still there, once
    assert sorted(line.text for line in page.lines) == sorted(line.text for line in lines)


def test_every_line_is_in_exactly_one_block_that_names_it() -> None:
    # GIVEN random pages of random boxes
    rng = random.Random(7)
    for _ in range(30):
        lines = []
        for k in range(rng.randint(1, 300)):
            x0, y0 = rng.uniform(0, W - 50), rng.uniform(0, H - 30)
            x1, y1 = x0 + rng.uniform(5, 900), y0 + rng.uniform(5, 60)
            lines.append(line(f"{k} " + "x" * rng.randint(1, 60), x0, y0, x1, y1))

        # WHEN each is read
        page = read(lines)

        # THEN the blocks' line indices, joined, are the lines in the order read, and each
        # block's text and box are its lines'
        assert sorted(line.text for line in page.lines) == sorted(line.text for line in lines)
        assert [i for block in page.blocks for i in block.lines] == list(range(len(lines)))
        for block in page.blocks:
            assert block.text == "\n".join(page.lines[i].text for i in block.lines)
            assert all(_inside(page.lines[i].box, block.box) for i in block.lines)


def _inside(box: Quad, outer: Quad) -> bool:
    xs, ys = [x for x, _ in outer], [y for _, y in outer]
    return all(
        min(xs) - 1e-6 <= x <= max(xs) + 1e-6 and min(ys) - 1e-6 <= y <= max(ys) + 1e-6
        for x, y in box
    )


@pytest.mark.parametrize("rotation", [90, 180, 270])
def test_blocks_still_name_their_lines_on_a_page_read_turned(rotation: Rotation) -> None:
    # GIVEN a page read upright after turning it, its lines ordered there
    lines = [line("Title of the paper", 350, 100, 870, 150)]
    lines += column("A", 80, 590, 240, 30) + column("B", 634, 1144, 240, 30)
    page = read(shuffled(lines, seed=5))
    width, height = (H, W) if rotation in (90, 270) else (W, H)

    # WHEN its boxes are mapped back onto the page as uploaded
    placed = content_on_original(
        PageContent(lines=page.lines, blocks=page.blocks),
        rotation=rotation,
        width=width,
        height=height,
    )

    # THEN the order is kept and each block still holds the boxes of the lines it names
    assert [line.text for line in placed.lines] == [line.text for line in page.lines]
    for block in placed.blocks:
        assert block.text == "\n".join(placed.lines[i].text for i in block.lines)
        assert all(_inside(placed.lines[i].box, block.box) for i in block.lines)


# ---- real PP-OCRv5 on a real page ------------------------------------------------------------
@pytest.mark.ocr
def test_a_real_two_column_page_reads_column_by_column(models_dir: Path, tmp_path: Path) -> None:
    # GIVEN a scanned two-column book page and the processor's engine (page orientation on)
    cache = ModelCache(local_root=tmp_path, search_roots=[models_dir])
    registry = EngineRegistry(resolve=cache.fetch, settings=EngineSettings(cpu_threads=2))
    engine = registry.get(OcrModel.PP_OCRV5, "en", JobOptions())
    expected = " ".join((SAMPLES / "two-columns-tale-of-two-cities.txt").read_text().split())

    # WHEN it is read end to end
    document = ocr_document(TWO_COLUMNS.read_bytes(), engine=engine, options=JobOptions())

    # THEN its text runs down the left column, then down the right, as the book reads
    page = document.pages[0]
    text = " ".join(page.text.split())
    assert "settled for ever. It was the year of Our Lord" in text
    assert "sentencing a youth to have his hands cut off, his tongue" in text
    assert Levenshtein.distance(expected, text) / len(expected) <= 0.02
    assert [block.type for block in page.blocks] == ["paragraph"] * len(page.blocks)
