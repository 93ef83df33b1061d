"""Words on their lines and the Textract blocks written from them, without an engine."""

from __future__ import annotations

import io
import json
from collections import Counter
from typing import Any

import numpy as np
import pytest

from idp.contract.results import Line, PageResult, Quad, Word
from idp.document.ocr.engine import PageContent
from idp.document.ocr.paddle.output import lines_from_ocr, words_on_line
from idp.document.ocr.steps.geometry import content_on_original
from idp.document.ocr.steps.regions import Region, lay_out
from idp.flow.textract_json import TextractWriter, estimated_words, geometry, page_blocks

# A line rising 10 px over its 400 px: its words must rise with it.
SKEWED: Quad = ((100.0, 110.0), (500.0, 100.0), (500.0, 140.0), (100.0, 150.0))


def _piece(x0: float, x1: float) -> list[tuple[float, float]]:
    """A word box as PaddleX's cal_ocr_word_box writes it: axis-aligned, the line's height."""
    return [(x0, 100.0), (x1, 100.0), (x1, 150.0), (x0, 150.0)]


def test_recognizer_pieces_join_into_the_line_s_words_along_its_skew() -> None:
    # GIVEN PaddleX's pieces of "Total: 1,284.50 EUR" (punctuation and numbers apart)
    texts = ["Total", ":", "1", ",", "284.50", "EUR"]
    boxes = [
        _piece(100, 180),
        _piece(180, 190),
        _piece(210, 220),
        _piece(220, 228),
        _piece(228, 330),
        _piece(350, 500),
    ]

    # WHEN they are placed on the line
    words = words_on_line(np.array(SKEWED), "Total: 1,284.50 EUR", texts, boxes, 1000, 1000)

    # THEN there is one word per token, spanning its pieces, on the line's slope
    assert [word.text for word in words] == ["Total:", "1,284.50", "EUR"]
    first, _, last = words
    assert first.box[0] == pytest.approx((100.0, 110.0))
    assert first.box[1] == pytest.approx((190.0, 107.75))  # 90/400 of the way up the top edge
    assert last.box[1] == pytest.approx((500.0, 100.0))
    assert last.box[2] == pytest.approx((500.0, 140.0))


def test_a_piece_that_spans_a_space_is_shared_by_its_words() -> None:
    # GIVEN PaddleX's pieces of "jaźń. Çok": a run of non-ASCII letters and punctuation is one
    # piece, space included
    texts = ["ja", "źń. Ç", "ok"]
    boxes = [_piece(100, 140), _piece(140, 240), _piece(240, 280)]

    # WHEN they are placed on the line
    words = words_on_line(np.array(SKEWED), "jaźń. Çok", texts, boxes, 1000, 1000)

    # THEN the piece's parts go to their words, each with its share of the piece's span
    assert [word.text for word in words] == ["jaźń.", "Çok"]
    assert words[0].box[1][0] == pytest.approx(200.0)  # "źń." is 3 of the piece's 5 characters
    assert words[1].box[0][0] == pytest.approx(220.0)


def test_pieces_that_do_not_spell_the_line_give_no_words() -> None:
    words = words_on_line(np.array(SKEWED), "Total due", ["Totel", "due"], [_piece(1, 2)] * 2, 9, 9)
    assert words == []


def test_the_engine_output_s_word_boxes_reach_the_lines() -> None:
    # GIVEN an OCRResult read with return_word_box, and one read without
    result = {
        "rec_texts": ["Paid in full"],
        "rec_scores": [0.9],
        "rec_polys": [np.array(SKEWED)],
        "text_word": [["Paid", "in", "full"]],
        "text_word_region": [[_piece(100, 180), _piece(200, 230), _piece(250, 320)]],
    }
    plain = {key: result[key] for key in ("rec_texts", "rec_scores", "rec_polys")}

    # THEN the first's line has its words, the second's none (they are estimated later)
    assert [word.text for word in lines_from_ocr(result, 1000, 1000)[0].words] == [
        "Paid",
        "in",
        "full",
    ]
    assert lines_from_ocr(plain, 1000, 1000)[0].words == []


def test_a_turned_page_s_words_move_with_their_lines() -> None:
    # GIVEN a line and its word read on a page turned 90° to read it
    line = Line(
        text="Hello",
        box=((10, 10), (60, 10), (60, 20), (10, 20)),
        confidence=0.9,
        words=[Word(text="Hello", box=((10, 10), (60, 10), (60, 20), (10, 20)))],
    )

    # WHEN the content is put back on the original page
    moved = content_on_original(
        PageContent(lines=[line]), rotation=90, width=200, height=100
    ).lines[0]

    # THEN the word's box is the line's, moved the same way
    assert moved.box != line.box
    assert moved.words[0].box == moved.box


def test_words_without_positions_are_placed_by_their_share_of_the_line() -> None:
    line = Line(text="ab  cdef", box=((0, 0), (80, 0), (80, 10), (0, 10)), confidence=0.5)
    words = estimated_words(line)
    assert [word.text for word in words] == ["ab", "cdef"]
    assert words[0].box[1] == pytest.approx((20.0, 0.0))  # 2 of 8 characters
    assert words[1].box[0] == pytest.approx((40.0, 0.0))  # starts after the two spaces
    # A vertical line reads down its quad.
    column = Line(text="縦書き", box=((0, 0), (10, 0), (10, 90), (0, 90)), confidence=0.5)
    assert estimated_words(column)[0].box[3] == pytest.approx((0.0, 90.0))


def test_geometry_is_shares_of_the_page_clamped_to_it() -> None:
    shape = geometry(((50, 20), (150, 20), (150, 60), (50, 60)), 200, 100)
    assert shape["BoundingBox"] == pytest.approx(
        {"Width": 0.5, "Height": 0.4, "Left": 0.25, "Top": 0.2}
    )
    assert shape["Polygon"][2] == pytest.approx({"X": 0.75, "Y": 0.6})
    assert geometry(((-5, 0), (250, 0), (250, 10), (-5, 10)), 200, 100)["BoundingBox"][
        "Width"
    ] == pytest.approx(1.0)


def test_blocks_link_page_to_lines_to_words_with_stable_ids() -> None:
    page = PageResult(
        page=2,
        width=100,
        height=50,
        lines=[
            Line(text="one two", box=((0, 0), (50, 0), (50, 10), (0, 10)), confidence=0.87),
            Line(text="three", box=((0, 20), (50, 20), (50, 30), (0, 30)), confidence=0.5),
        ],
    )
    blocks = page_blocks(page, job_id="job")
    kinds = [block["BlockType"] for block in blocks]
    assert kinds == ["PAGE", "LINE", "WORD", "WORD", "LINE", "WORD"]
    by_id = {block["Id"]: block for block in blocks}
    lines = [by_id[i] for i in blocks[0]["Relationships"][0]["Ids"]]
    assert [line["Text"] for line in lines] == ["one two", "three"]
    assert [by_id[i]["Text"] for i in lines[0]["Relationships"][0]["Ids"]] == ["one", "two"]
    assert lines[0]["Confidence"] == pytest.approx(87.0)
    assert {block["Page"] for block in blocks} == {2}
    assert page_blocks(page, job_id="job") == blocks  # a retry writes the same ids
    assert page_blocks(page, job_id="other")[0]["Id"] != blocks[0]["Id"]


def test_the_writer_streams_a_whole_response() -> None:
    empty = PageResult(page=1, width=10, height=10)
    out = io.BytesIO()
    writer = TextractWriter(out, job_id="j")
    writer.add(empty)
    writer.add(empty.model_copy(update={"page": 2}))
    writer.close(model_version="PP-OCRv5")
    document = json.loads(out.getvalue())
    assert document["DocumentMetadata"] == {"Pages": 2}
    assert [block["Page"] for block in document["Blocks"]] == [1, 2]
    assert document["DetectDocumentTextModelVersion"] == "PP-OCRv5"


# The lines of the sales page as the detector finds them: (text, x0, y0, x1, y1).
SALES_LINES: list[tuple[str, float, float, float, float]] = [
    ("Sales by region", 110, 50, 400, 80),
    ("Year", 110, 145, 200, 175),
    ("Sales", 310, 105, 400, 135),
    ("EU", 310, 145, 360, 175),
    ("US", 510, 145, 560, 175),
    ("2024", 110, 185, 200, 215),
    ("1,284.50", 310, 185, 420, 215),
    ("990.00", 510, 185, 600, 215),
]


def _structure_page() -> PageResult:
    """A layout model's page: a title, then a table whose first header cell spans two rows."""
    laid = lay_out(
        [
            Region(label="doc_title", box=_box(100, 40, 700, 90), text="Sales by region"),
            Region(
                label="table",
                box=_box(100, 100, 700, 220),
                html="<table><tr><td rowspan='2'>Year</td><td colspan='2'>Sales</td></tr>"
                "<tr><td>EU</td><td>US</td></tr>"
                "<tr><td>2024</td><td>1,284.50</td><td>990.00</td></tr></table>",
                cell_boxes=[
                    _box(100, 100, 300, 180),
                    _box(300, 100, 700, 140),
                    _box(300, 140, 500, 180),
                    _box(500, 140, 700, 180),
                    _box(100, 180, 300, 220),
                    _box(300, 180, 500, 220),
                    _box(500, 180, 700, 220),
                ],
            ),
        ],
        [_line(text, *bounds) for text, *bounds in SALES_LINES],
    )
    return PageResult(page=1, width=800, height=300, lines=laid.lines, blocks=laid.blocks)


def _box(x0: float, y0: float, x1: float, y1: float) -> Quad:
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def _line(text: str, x0: float, y0: float, x1: float, y1: float) -> Line:
    return Line(text=text, box=_box(x0, y0, x1, y1), confidence=0.98)


def _analyzed(page: PageResult) -> dict[str, Any]:
    out = io.BytesIO()
    writer = TextractWriter(out, job_id="job-structure")
    writer.add(page)
    writer.close(model_version="PP-StructureV3")
    document: dict[str, Any] = json.loads(out.getvalue())
    return document


def test_a_layout_page_is_an_analyze_document_response_with_layout_and_tables() -> None:
    # WHEN a layout model's page is written
    document = _analyzed(_structure_page())

    # THEN it is AnalyzeDocument's: a title layout, a table layout, a TABLE of 3 × 3 CELLs and
    # the merged cells of its spans, every block the PAGE names or its parts name
    kinds = Counter(block["BlockType"] for block in document["Blocks"])
    assert kinds == {
        "PAGE": 1,
        "LINE": 8,
        "WORD": 10,
        "LAYOUT_TITLE": 1,
        "LAYOUT_TABLE": 1,
        "TABLE": 1,
        "CELL": 9,
        "MERGED_CELL": 2,
    }
    assert "AnalyzeDocumentModelVersion" in document
    by_id = {block["Id"]: block for block in document["Blocks"]}
    merged = [block for block in document["Blocks"] if block["BlockType"] == "MERGED_CELL"]
    year = next(block for block in merged if block["ColumnIndex"] == 1)
    assert (year["RowSpan"], year["ColumnSpan"]) == (2, 1)
    spanned = [by_id[i] for i in year["Relationships"][0]["Ids"]]
    assert [(c["RowIndex"], c["ColumnIndex"]) for c in spanned] == [(1, 1), (2, 1)]


def test_textractor_reads_the_table_into_rows() -> None:
    # WHEN textractor, as a user's code would, turns the table into a data frame
    from textractor.parsers import response_parser

    document = response_parser.parse(_analyzed(_structure_page()))
    frame = document.tables[0].to_pandas()

    # THEN it has the table's rows, each value in its column
    assert frame.shape == (3, 3)
    assert [str(value).strip() for value in frame.iloc[2]] == ["2024", "1,284.50", "990.00"]
    assert str(frame.iloc[0, 0]).strip() == "Year"
    assert "1,284.50" in document.tables[0].to_markdown()


def test_trp_reads_the_table_row_by_row() -> None:
    # WHEN amazon-textract-response-parser reads it
    import trp  # type: ignore[import-untyped]

    table = trp.Document(_analyzed(_structure_page())).pages[0].tables[0]

    # THEN its rows and cells are the table's
    assert len(table.rows) == 3
    assert [cell.text.strip() for cell in table.rows[2].cells] == ["2024", "1,284.50", "990.00"]


def test_a_text_line_page_stays_detect_document_text() -> None:
    page = PageResult(page=1, width=800, height=300, lines=[_line("Hello", 10, 10, 100, 30)])
    document = _analyzed(page)
    assert {block["BlockType"] for block in document["Blocks"]} == {"PAGE", "LINE", "WORD"}
    assert "DetectDocumentTextModelVersion" in document
