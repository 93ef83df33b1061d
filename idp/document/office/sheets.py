"""A spreadsheet's cells as the table blocks of its pages.

A spreadsheet is converted to PDF a sheet to a page (small sheets) and its cells are exported as
shown; its pages are read from the PDF's text layer like any born-digital page. Each page is
then matched to the sheet it shows (by the words they share) and given one table block holding
that sheet's whole grid: every cell's text as the spreadsheet formats it, its row and column,
and its box where its words are found on the page. Cells are never re-read from pixels.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Sequence
from typing import Final

from idp.contract.conversion import Sheet
from idp.contract.quads import hull
from idp.contract.results import Block, PageResult, Quad, TableCell, Word
from idp.document.ocr.steps.tables import markdown_table

SHEET_LABEL: Final = "sheet"
# A page shows a sheet when it holds at least this share of the sheet's words.
MIN_SHARED_WORDS: Final = 0.6


def with_sheet_tables(pages: list[PageResult], sheets: Sequence[Sheet]) -> list[PageResult]:
    """`pages` with each page that shows a sheet given that sheet's table block (and Markdown);
    the sheets are matched in their order, each to one page at most."""
    if not sheets:
        return pages
    unused = list(sheets)
    out = []
    for page in pages:
        sheet = _shown_sheet(page, unused)
        if sheet is None:
            out.append(page)
            continue
        unused.remove(sheet)
        out.append(_with_table(page, sheet))
    return out


def _words(text: str) -> Counter[str]:
    return Counter(text.split())


def _shown_sheet(page: PageResult, sheets: list[Sheet]) -> Sheet | None:
    """The first of `sheets` whose words the page holds (MIN_SHARED_WORDS of them)."""
    on_page = _words(page.text)
    for sheet in sheets:
        words = _words(" ".join(text for row in sheet.rows for text in row))
        total = sum(words.values())
        if total and sum((words & on_page).values()) / total >= MIN_SHARED_WORDS:
            return sheet
    return None


def _with_table(page: PageResult, sheet: Sheet) -> PageResult:
    cells = sheet_cells(sheet, page)
    boxes = [cell.box for cell in cells if cell.box is not None]
    boxes += [line.box for line in page.lines]
    if not boxes:
        return page
    table = markdown_table(cells)
    block = Block(
        type="table",
        label=SHEET_LABEL,
        box=hull(boxes),
        html=table_html(cells),
        markdown=table,
        lines=list(range(len(page.lines))),
        cells=cells,
    )
    return page.model_copy(
        update={"blocks": [block], "markdown": f"## {sheet.name}\n\n{table}".rstrip()}
    )


def sheet_cells(sheet: Sheet, page: PageResult) -> list[TableCell]:
    """Every place of the sheet's grid as a cell, row by row; a cell's box is the box of its
    words on `page`, found in the page's order (None where they are not found)."""
    words = [word for line in page.lines for word in line.words]
    used = [False] * len(words)
    cells = []
    for row_index, row in enumerate(sheet.rows):
        for column_index, text in enumerate(row):
            box = _find_words(text.split(), words, used) if text.strip() else None
            cells.append(
                TableCell(row=row_index + 1, column=column_index + 1, text=text.strip(), box=box)
            )
    return cells


def _find_words(wanted: list[str], words: list[Word], used: list[bool]) -> Quad | None:
    """The box of the first unused run of `words` that reads `wanted`, marked used."""
    span = len(wanted)
    for start in range(len(words) - span + 1):
        run = range(start, start + span)
        if any(used[i] for i in run):
            continue
        if all(words[i].text == wanted[k] for k, i in enumerate(run)):
            for i in run:
                used[i] = True
            return hull([words[i].box for i in run])
    return None


def table_html(cells: Sequence[TableCell]) -> str:
    """The cells as an HTML table, a row per sheet row."""
    rows: dict[int, list[str]] = {}
    for cell in cells:
        rows.setdefault(cell.row, []).append(f"<td>{html.escape(cell.text)}</td>")
    body = "".join(f"<tr>{''.join(row)}</tr>" for _, row in sorted(rows.items()))
    return f"<table>{body}</table>"
