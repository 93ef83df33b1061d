"""A spreadsheet's cells are read from LibreOffice's CSV export as a stream, only while the sheet
may still fit one page: a sheet longer or wider than that is printed across pages and never
given as a table, and its export is not read to the end."""

from __future__ import annotations

import io
from pathlib import Path

import openpyxl
import pytest
from pypdf import PdfReader

from idp.contract.names import MediaType
from idp.document.office.libreoffice import (
    SINGLE_PAGE_SHEET_ROWS,
    LibreOffice,
    read_sheet_csv,
)


def test_a_long_export_is_read_only_until_the_sheet_cannot_fit_a_page(tmp_path: Path) -> None:
    # GIVEN a sheet's export of a million rows (about 20 MB)
    export = tmp_path / "sheet.csv"
    with export.open("w", encoding="utf-8") as out:
        out.writelines(f"{n},value {n},{n * 3}\n" for n in range(1_000_000))

    rows = read_sheet_csv(export)

    # THEN no more than one row past a page's worth was kept
    assert len(rows) == SINGLE_PAGE_SHEET_ROWS + 1
    assert rows[0] == ["0", "value 0", "0"]


def test_a_field_beyond_the_csv_limit_makes_the_sheet_oversized_not_a_crash(
    tmp_path: Path,
) -> None:
    export = tmp_path / "sheet.csv"
    export.write_text('small,"' + "x" * 200_000 + '"\n', encoding="utf-8")
    assert len(read_sheet_csv(export)) == SINGLE_PAGE_SHEET_ROWS + 1


def test_trailing_empty_rows_do_not_make_a_sheet_oversized(tmp_path: Path) -> None:
    export = tmp_path / "sheet.csv"
    export.write_text("a,b\n1,2\n" + ",\n" * 5000, encoding="utf-8")
    assert read_sheet_csv(export) == [["a", "b"], ["1", "2"]]


@pytest.mark.ocr
def test_a_workbook_with_a_long_sheet_keeps_its_small_sheets_cells(tmp_path: Path) -> None:
    # GIVEN a workbook of a small sheet and a sheet of 3,000 rows
    workbook = openpyxl.Workbook()
    small = workbook.active
    small.title = "Summary"
    small.append(["Region", "Total"])
    small.append(["North", 12])
    long = workbook.create_sheet("Ledger")
    for n in range(3000):
        long.append([n, f"entry {n}", n * 2])
    data = io.BytesIO()
    workbook.save(data)

    converted = LibreOffice(work_root=tmp_path).convert(data.getvalue(), MediaType.XLSX)

    # THEN the small sheet's cells come as its table, the long one is paginated and not given
    assert [sheet.name for sheet in converted.sheets] == ["Summary"]
    assert converted.sheets[0].rows == [["Region", "Total"], ["North", "12"]]
    assert len(PdfReader(io.BytesIO(converted.pdf)).pages) > 2
