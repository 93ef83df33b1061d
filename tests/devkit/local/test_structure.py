"""PP-StructureV3 end to end, offline, through `idp local run`: PaddleOCR's own pipeline on real
weights for every stage it runs (the CDLA layout model in PP-DocLayout's place), on a real
two-column scan and real born-digital table pages (tests/samples: licences in its README). A
born-digital page takes its text and tables from its PDF; `--text-layer ocr` reads it from its
pixels as a scan."""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from textractor.parsers import response_parser

from devkit.textmetrics import character_error_rate
from idp.contract import names
from idp.contract.results import LAYOUT_BLOCK_TYPES
from tests.docs_samples import integrate_sample
from tests.local_runs import idp_cli
from tests.paths import REPO_ROOT
from tests.pdftext import pdf_text

pytestmark = pytest.mark.ocr

REPO = REPO_ROOT
SAMPLES = REPO / "tests" / "samples"
TWO_COLUMNS = SAMPLES / "two-columns-tale-of-two-cities.png"
MTCARS = SAMPLES / "tables" / "mtcars.pdf"
LINEPLOT = SAMPLES / "tables" / "reportlab-lineplot.pdf"


def _truth_rows(table: Path) -> list[list[str]]:
    with table.open(encoding="utf-8", newline="") as rows:
        return [[value.strip() for value in row] for row in csv.reader(rows)]


def _run(tmp: Path, *files: Path, text_layer: str = "auto") -> dict[str, dict[str, Any]]:
    done = idp_cli(
        "local", "run", *map(str, files), "--model", "PP-StructureV3", "--text-layer", text_layer,
        "--json", "--out", str(tmp), "--overlay-page", "0",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Warning" not in done.stderr  # no library's warnings reach the user
    return {Path(row["file"]).name: row for row in json.loads(done.stdout)}


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """`idp local run --model PP-StructureV3` on the three pages; each file's row."""
    return _run(tmp_path_factory.mktemp("structure"), TWO_COLUMNS, MTCARS, LINEPLOT)


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The ReportLab page read from its pixels (`--text-layer ocr`), as a scan of it would be."""
    return _run(tmp_path_factory.mktemp("scanned"), LINEPLOT, text_layer="ocr")


def _files(row: dict[str, Any]) -> Path:
    return Path(row["result"]).parent


def test_both_pages_complete_offline_with_typed_blocks(ran: dict[str, dict[str, Any]]) -> None:
    for row in ran.values():
        assert row["status"] == "COMPLETED", row
        result = json.loads(Path(row["result"]).read_text())
        (page,) = result["pages"][:1]
        assert page["blocks"], "no blocks"
        assert {block["type"] for block in page["blocks"]} <= set(LAYOUT_BLOCK_TYPES)
        # every block is a layout region, but for the lines outside every region, read last
        # as one text block (on the ReportLab page: a bracket of code left of the figure)
        unlabelled = [block for block in page["blocks"] if block["label"] is None]
        assert unlabelled in ([], page["blocks"][-1:])
        assert all(block["type"] == "text" for block in unlabelled)
        stages = {stage["name"]: stage for stage in page["stages"]}
        assert stages["layout"]["substitute_for"] == "PP-DocLayout_plus-L"
        if page["text_source"] == "ocr":  # the scan: PaddleOCR's table model
            assert stages["table"]["model"] == "SLANet_plus"
        else:  # a born-digital page: its text and tables from its PDF, every block's
            assert page["text_source"] == "text_layer"
            assert {block["text_source"] for block in page["blocks"]} == {"text_layer"}
            assert stages["text"]["note"] == "the PDF's text layer"
            # no region was OCR'd: the OCR only read a few table cells again, to check the layer
            assert stages["ocr"]["note"] == "a few table cells, read again to check the layer"
            assert stages["ocr"]["model"].endswith("_rec")


def test_the_born_digital_table_gives_every_cell_of_the_pdf_exactly(
    ran: dict[str, dict[str, Any]],
) -> None:
    # GIVEN tabula-py's mtcars page and its own CSV of the table
    result = json.loads(Path(ran["mtcars.pdf"]["result"]).read_text())
    truth = _truth_rows(SAMPLES / "tables" / "mtcars.csv")

    # THEN the table's cells are the CSV's, every one of them, in their places
    (table,) = [block for block in result["pages"][0]["blocks"] if block["type"] == "table"]
    grid = [["" for _ in truth[0]] for _ in truth]
    for cell in table["cells"]:
        assert (cell["row_span"], cell["column_span"]) == (1, 1)
        grid[cell["row"] - 1][cell["column"] - 1] = cell["text"]
    assert grid == truth
    assert result["pages"][0]["quality"]["verdict"] == "ok"


def test_the_table_page_gives_its_cells_a_markdown_table_and_textractor_rows(
    ran: dict[str, dict[str, Any]],
) -> None:
    # GIVEN tabula-py's mtcars table and its own CSV
    files = _files(ran["mtcars.pdf"])
    result = json.loads((files / "result.json").read_text())
    truth = _truth_rows(SAMPLES / "tables" / "mtcars.csv")

    # THEN result.json has the table block with its cells, the 33 × 12 grid of the CSV
    tables = [block for block in result["pages"][0]["blocks"] if block["type"] == "table"]
    assert len(tables) == 1
    cells = tables[0]["cells"]
    grid = {(cell["row"], cell["column"]): cell["text"] for cell in cells}
    assert max(r for r, _ in grid) == len(truth) == 33
    assert max(c for _, c in grid) == len(truth[0]) == 12
    exact = sum(
        grid.get((r + 1, c + 1)) == value
        for r, row in enumerate(truth)
        for c, value in enumerate(row)
    )
    assert exact == 33 * 12
    # AND result.md has it as a Markdown table
    markdown = (files / "result.md").read_text()
    assert "| Mazda RX4 | 21.0 | 6 | 160.0 | 110 |" in markdown
    # AND textractor, reading result.textract.json, gives the table's rows
    textract = json.loads((files / "result.textract.json").read_text())
    frame = response_parser.parse(textract).tables[0].to_pandas()
    assert frame.shape == (33, 12)
    assert [str(value).strip() for value in frame.iloc[1, :3]] == ["Mazda RX4", "21.0", "6"]
    # AND the Integrate page's sample, run as written on the job's file, gives the rows too
    scope: dict[str, Any] = {}
    previous = Path.cwd()
    os.chdir(files)
    try:
        exec(integrate_sample("python", "to_pandas"), scope)
    finally:
        os.chdir(previous)
    assert scope["rows"].shape == (33, 12)
    assert "Mazda RX4" in scope["markdown"]
    # AND the page's text reads the table row by row: the header, then the first car's row
    texts = [line["text"] for line in result["pages"][0]["lines"]]
    start = texts.index("carb")
    assert texts[start + 1 : start + 4] == ["Mazda RX4", "21.0", "6"]
    # AND so does the searchable PDF's text layer, in the order a copy of the page gives it
    raw = pdf_text(files / "result.pdf", 1, raw=True)
    assert re.search(r"carb\s+Mazda RX4\s+21\.0\s+6\s+160\.0\s+110", raw), raw[:400]


def _lineplot_table_truth() -> list[list[str | None]]:
    """The cells of the ruled property table on ReportLab's line-plot page, from its PDF."""
    import pdfplumber

    with pdfplumber.open(LINEPLOT) as pdf:
        (truth,) = [t.extract() for t in pdf.pages[0].find_tables() if len(t.rows) > 2]
    return truth


def _lineplot_page(jobs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The one page of the line-plot job's result."""
    result = json.loads(Path(jobs["reportlab-lineplot.pdf"]["result"]).read_text())
    (page,) = result["pages"]
    return dict(page)


def test_a_ruled_table_the_layout_model_calls_a_figure_is_found_and_read_by_its_grid(
    scanned: dict[str, dict[str, Any]],
) -> None:
    # GIVEN ReportLab's page of a chart, its code and a ruled 9 x 2 property table, which the
    # CDLA layout model covers with one figure; its true cells from its own text layer
    truth, page = _lineplot_table_truth(), _lineplot_page(scanned)

    # THEN the table is a block of its own, below the figure, read from its ruling lines
    types = [block["type"] for block in page["blocks"]]
    assert types.count("table") == 1
    assert "figure" in types[: types.index("table")]
    stages = {stage["name"]: stage for stage in page["stages"]}
    assert "img2table" in stages["table"]["note"]
    # AND its cells are the table's 9 rows and 2 columns, nearly every one read as printed
    (table,) = [block for block in page["blocks"] if block["type"] == "table"]
    grid = {(cell["row"], cell["column"]): cell["text"] for cell in table["cells"]}
    assert (max(r for r, _ in grid), max(c for _, c in grid)) == (9, 2)
    rate = [
        character_error_rate(" ".join((value or "").split()), grid.get((r + 1, c + 1)) or "")
        for r, row in enumerate(truth)
        for c, value in enumerate(row)
    ]
    assert sum(error <= 0.05 for error in rate) >= 16, list(zip(grid.values(), rate, strict=False))
    assert grid[(2, 1)] == "data"
    assert page["quality"]["verdict"] == "ok"


def test_the_two_column_page_reads_column_by_column(ran: dict[str, dict[str, Any]]) -> None:
    # GIVEN the two-column book page and its text typed in reading order
    result = json.loads(Path(ran["two-columns-tale-of-two-cities.png"]["result"]).read_text())
    truth = (SAMPLES / "two-columns-tale-of-two-cities.txt").read_text()

    # THEN the page's text follows its columns, and its Markdown holds its paragraphs
    assert character_error_rate(truth, result["text"]) <= 0.05
    assert result["markdown"]
    assert (
        "It was the year of Our Lord one thousand seven hundred and seventy-five."
        in (result["markdown"])
    )
    assert "England; there were a king" in result["markdown"]
    assert result["pages"][0]["quality"]["verdict"] == "ok"


def test_a_born_digital_table_the_layout_model_calls_a_figure_is_found_by_its_rulings(
    ran: dict[str, dict[str, Any]],
) -> None:
    # GIVEN ReportLab's page of a chart and a ruled property table, as its PDF, and the
    # table's cells from its own text layer
    truth, page = _lineplot_table_truth(), _lineplot_page(ran)

    # THEN its ruling lines make it a table block of its own, its cells the PDF's words
    (table,) = [block for block in page["blocks"] if block["type"] == "table"]
    grid = {(cell["row"], cell["column"]): cell["text"] for cell in table["cells"]}
    assert (max(r for r, _ in grid), max(c for _, c in grid)) == (len(truth), len(truth[0]))
    for r, row in enumerate(truth):
        for c, value in enumerate(row):
            assert grid[(r + 1, c + 1)] == " ".join((value or "").split())


def test_a_structure_run_prints_its_markdown_and_lists_the_files_it_wrote(
    ran: dict[str, dict[str, Any]],
) -> None:
    from devkit.cli.common import out
    from devkit.cli.local import print_result_summary
    from devkit.cli.views import RESULT_HTML

    # WHEN `idp local run` (without --json) sums up the mtcars job
    row = ran["mtcars.pdf"]
    with out.capture() as captured:
        print_result_summary(row["file"], Path(row["result"]), None)
    shown = captured.get().splitlines()

    # THEN its table prints as a table: a row's label and values on one line, not a cell a line
    assert any("Mazda RX4 Wag" in line and "160.0" in line for line in shown), shown[:40]
    # AND every file the job wrote is named
    for name in (names.RESULT_MD, names.RESULT_JSON, names.RESULT_PDF, names.RESULT_TEXTRACT):
        assert f"  {_files(row) / name}" in shown
    assert f"  {_files(row) / RESULT_HTML}" in shown
