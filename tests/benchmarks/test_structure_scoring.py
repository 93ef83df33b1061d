"""How the structure benchmark scores tables and page text (benchmarks/structure_scoring.py)
and carries a table's box into its scan (benchmarks/structure_corpus.py). No engine, no
network."""

from __future__ import annotations

import pytest

from benchmarks import corpora, real_corpus
from benchmarks import structure_corpus as corpus
from benchmarks import structure_scoring as scoring

XY: scoring.Grid = [["x", "y"], ["1", "2"]]
NOISE: scoring.Grid = [["noise", "more"], ["a", "b"]]
PRICES: scoring.Grid = [
    ["Item", "Qty", "Price"],
    ["Apples", "3", "1.20"],
    ["Pears", "", "2.50"],
]


def test_a_table_read_perfectly_scores_one_on_every_measure() -> None:
    # GIVEN a true table and a prediction that reads every cell as it is
    # WHEN scored
    score = scoring.adjacency_score(PRICES, PRICES)
    # THEN TEDS, TEDS-struct and cell-adjacency F1 are all 1
    assert scoring.teds(PRICES, PRICES) == 1.0
    assert scoring.teds(PRICES, PRICES, structure_only=True) == 1.0
    assert (score.precision, score.recall, score.f1) == (1.0, 1.0, 1.0)


def test_a_dropped_column_lowers_teds_and_adjacency_recall_but_not_precision() -> None:
    # GIVEN a prediction that lost the table's last column
    dropped = [row[:2] for row in PRICES]
    # WHEN scored
    adjacency = scoring.adjacency_score(dropped, PRICES)
    # THEN structure and content similarity fall, and so does the share of relations found
    assert scoring.teds(dropped, PRICES) < 1.0
    assert scoring.teds(dropped, PRICES, structure_only=True) < 1.0
    assert adjacency.recall < 1.0
    # while the relations it does have are all true (Pears-below-Apples, Item-Qty, ...)
    assert adjacency.precision == 1.0


def test_a_misread_cell_costs_teds_but_not_teds_struct() -> None:
    # GIVEN a prediction with the right grid and one cell misread
    misread = [row[:] for row in PRICES]
    misread[1][2] = "1.28"
    # THEN only the content-aware TEDS notices
    assert scoring.teds(misread, PRICES) < 1.0
    assert scoring.teds(misread, PRICES, structure_only=True) == 1.0


def test_spans_expand_to_the_slots_they_cover_and_survive_a_round_trip() -> None:
    # GIVEN an engine's HTML with a header cell over two columns and a cell over two rows,
    # written with <thead>, <th> and inline markup
    html = (
        "<table><thead><tr><th>Fruit</th><th colspan='2'>Price <b>EUR</b></th></tr></thead>"
        "<tbody><tr><td rowspan=2>Apples</td><td>1.20</td><td>kg</td></tr>"
        "<tr><td>0.40</td><td>each</td></tr></tbody></table>"
    )
    # WHEN read as a grid
    grid = scoring.grid_of_html(html)
    # THEN every slot is there, the spanning cells' text in their first slot, None elsewhere
    assert grid == [
        ["Fruit", "Price EUR", None],
        ["Apples", "1.20", "kg"],
        [None, "0.40", "each"],
    ]
    # and writing the grid back keeps the spans
    assert scoring.html_of_grid(grid) == (
        '<table><tr><td>Fruit</td><td colspan="2">Price EUR</td></tr>'
        '<tr><td rowspan="2">Apples</td><td>1.20</td><td>kg</td></tr>'
        "<tr><td>0.40</td><td>each</td></tr></table>"
    )
    assert scoring.grid_of_html(scoring.html_of_grid(grid)) == grid


def test_a_block_span_from_pdfplumber_becomes_one_cell() -> None:
    # GIVEN pdfplumber's grid for ReportLab's span example: a 2x2 "Top Left" cell
    grid: scoring.Grid = [["Top Left", None, "02"], [None, None, "12"], ["20", "21", "22"]]
    # WHEN its cells are read
    cells = scoring.cells_of_grid(grid)
    # THEN the top-left cell spans two rows and two columns and nothing else spans
    assert cells[0] == scoring.Cell(0, 0, 2, 2, "Top Left")
    assert [(c.rowspan, c.colspan) for c in cells[1:]] == [(1, 1)] * 5


def test_adjacency_relations_of_a_three_by_three_grid_skip_empty_cells() -> None:
    # GIVEN a 3x3 grid whose centre is empty
    grid: scoring.Grid = [["a", "b", "c"], ["d", "", "f"], ["g", "h", "i"]]
    # WHEN its relations are listed
    relations = scoring.adjacency_relations(grid)
    # THEN each non-empty cell meets its nearest non-empty neighbour right and below,
    # reaching over the empty centre (d→f, b→h)
    expected = "a b right, b c right, d f right, g h right, h i right, " + (
        "a d below, d g below, b h below, c f below, f i below"
    )
    assert set(relations) == {tuple(relation.split()) for relation in expected.split(", ")}
    assert sum(relations.values()) == 10


def test_a_spanning_cell_is_one_neighbour() -> None:
    # GIVEN a header over two columns
    grid: scoring.Grid = [["Price", None], ["1.20", "kg"]]
    # THEN the header relates once, to the cell below its first column
    assert scoring.adjacency_relations(grid) == {
        ("Price", "1.20", "below"): 1,
        ("1.20", "kg", "right"): 1,
    }


def test_tables_are_paired_by_box_and_a_missed_table_scores_zero() -> None:
    # GIVEN a page with two true tables, and an engine that found the second one only, plus
    # something it took for a table elsewhere
    truth = [
        scoring.PageTable(PRICES, (0, 0, 100, 100)),
        scoring.PageTable(XY, (0, 200, 100, 300)),
    ]
    found = [
        scoring.PageTable(NOISE, (0, 500, 100, 600)),
        scoring.PageTable(XY, (2, 198, 101, 305)),
    ]
    # WHEN the page is scored
    score = scoring.score_page_tables(found, truth)
    # THEN the second table is paired with the prediction over it and scores 1
    assert [(t.truth_index, t.predicted_index) for t in score.tables] == [(0, None), (1, 1)]
    assert score.tables[1].teds == 1.0
    # the missed table scores 0, so the page's mean TEDS is a half
    assert score.tables[0].teds == 0.0
    assert score.teds == pytest.approx(0.5)
    # and the stray table counts against precision: its relations are all wrong
    assert score.extra == 1
    assert score.adjacency.predicted == 4 + 4  # the pair's 4 and the stray table's 4
    assert score.adjacency.correct == 4
    assert score.table_precision == pytest.approx(0.5)


def test_a_prediction_without_a_box_is_paired_by_content() -> None:
    # GIVEN a prediction that carries no box
    truth = [scoring.PageTable(PRICES, (0, 0, 100, 100))]
    found = [scoring.PageTable(PRICES, None)]
    # THEN it is still paired with the table it reads
    assert scoring.match_tables(found, truth) == [(0, 0)]


def test_tables_on_a_page_without_true_tables_are_not_scored() -> None:
    # GIVEN a form page with no true tables, where an engine found one
    score = scoring.score_page_tables([scoring.PageTable(PRICES, (0, 0, 9, 9))], [])
    # THEN the page has no table figures and nothing counts against the engine
    assert not score.scored
    assert score.teds is None
    assert score.adjacency.predicted == 0


def test_page_cer_is_order_sensitive_and_ignores_line_breaks() -> None:
    # GIVEN a page's reference text in reading order
    reference = "Total due\n12.50 EUR"
    # THEN line breaks and space runs cost nothing, and reading out of order does
    assert scoring.page_cer(reference, "Total due 12.50   EUR") == 0.0
    assert scoring.page_cer(reference, "12.50 EUR Total due") > 0.3


def test_page_cer_can_leave_dot_leaders_out() -> None:
    reference = "Contents . . . . . . 3"
    assert scoring.page_cer(reference, "Contents 3", strip_leaders=True) == 0.0


def test_a_table_box_follows_the_page_into_its_skewed_scan() -> None:
    import numpy as np
    from PIL import Image, ImageDraw

    # GIVEN a page rendered at 144 dpi (2 pixels a point) with a solid box 50..120 x 60..100 pt
    page = Image.new("L", (400, 600), 255)
    ImageDraw.Draw(page).rectangle((100, 120, 239, 199), fill=0)
    # WHEN it is scanned 2 degrees askew, as the corpus damages its pages
    damage = corpora.Damage(dpi=144, angle=2.0, blur=0.0, noise=0.0, jpeg_quality=90, seed=0)
    scan = real_corpus.damaged_scan(page, damage)
    # THEN the box carried into the scan holds the ink where the scan has it, to a pixel or two
    ys, xs = np.nonzero(np.asarray(scan) < 128)
    ink = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
    box = corpus.scan_box((50, 60, 120, 100), damage, page.size, scan.size)
    assert box == pytest.approx(ink, abs=2.0)


def test_teds_is_never_below_zero() -> None:
    # GIVEN a one-row table of six cells and a reading of three one-cell rows of other words,
    # which the reference code scores -0.125
    truth = [[f"0.{column}" for column in range(6)]]
    predicted = [[f"note {row}"] for row in range(3)]

    # WHEN scored THEN TEDS stays within its range
    assert scoring.teds(predicted, truth) == 0.0
