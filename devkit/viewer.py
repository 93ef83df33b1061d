"""result.html: a job's pages with what was read on them, in one file a browser opens offline.

Each page shows its picture as the engine saw it, with the layout blocks drawn by type (or the
lines, for a text-line model) and each line's text and confidence on hover; its tables beside
it as HTML tables; and why a person should look, where the page asks for review. The file
embeds everything it shows and its policy forbids every fetch (Content-Security-Policy).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable
from html import escape
from pathlib import Path
from typing import Any, Final

from PIL import Image

from idp.contract.errors import JobError
from idp.contract.jobs import JobOptions
from idp.document.decode import open_document

# Pictures are scaled down to this width (their boxes keep the page's pixel space) and only the
# first pages of a long document get one: a file a browser opens at once.
PICTURE_WIDTH: Final = 1400
PICTURED_PAGES: Final = 50
LOW_CONFIDENCE: Final = 0.6  # as PageQuality.low_confidence_lines counts them
_POLICY: Final = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

_STYLE: Final = (Path(__file__).parent / "viewer.css").read_text()


def render_viewer(document: bytes, result: dict[str, Any], *, options: JobOptions) -> str:
    """result.html for `result` (result.json), its pages drawn from `document`: the input as
    uploaded, or an Office document's conversion (result.pdf)."""
    pages = result.get("pages", [])
    pictures = _pictures(document, pages[:PICTURED_PAGES], options=options)
    sections = [_page_section(page, pictures.get(int(page["page"]))) for page in pages]
    review = result.get("review_pages") or []
    meta = (
        f"{escape(str(result.get('model')))} · {escape(result['engine']['name'])} · "
        f"{len(pages)} page{'' if len(pages) == 1 else 's'} · "
        + (f"review pages {', '.join(map(str, review))}" if review else "no page to review")
    )
    source = result.get("source") or {}
    title = escape(str(source.get("key", result.get("job_id", ""))).rsplit("/", 1)[-1])
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">'
        f"<title>{title}</title><style>{_STYLE}</style></head><body>"
        f'<header><h1>{title}</h1><p class="meta">{meta} · job {escape(result["job_id"])}</p>'
        '<p class="meta legend"><span>boxes: blue a block, green a table, purple a title, '
        "grey a figure; red a line, orange a line read with low confidence</span>"
        "<span>hover a box for its text</span></p></header>"
        + "".join(sections)
        + "</body></html>\n"
    )


def _pictures(
    document: bytes, pages: Iterable[dict[str, Any]], *, options: JobOptions
) -> dict[int, Image.Image | str]:
    """Each page's picture, or why it has none (a page too thin to rasterize)."""
    from devkit.overlay import page_picture

    pictures: dict[int, Image.Image | str] = {}
    with open_document(document, pdf_scale=options.pdf_scale) as opened:
        for page in pages:
            try:
                pictures[int(page["page"])] = page_picture(opened, page)
            except (JobError, LookupError) as exc:
                pictures[int(page["page"])] = str(exc)
    return pictures


def _page_section(page: dict[str, Any], picture: Image.Image | str | None) -> str:
    number = int(page["page"])
    quality = page.get("quality") or {}
    verdict = quality.get("verdict") or "ok"
    reasons = [str(reason).replace("_", " ") for reason in quality.get("reasons", [])]
    doubtful = quality.get("doubtful_numbers") or []
    flagged = ""
    if verdict == "review":
        why = ", ".join(reasons) or "the page's reading is in doubt"
        numbers = f"; numbers to check: {', '.join(doubtful)}" if doubtful else ""
        flagged = f'<p class="reasons">Review: {escape(why + numbers)}</p>'
    tables = [block for block in page.get("blocks", []) if block.get("type") == "table"]
    tables_html = "".join(
        f"<h3>Table {index}</h3>{_table(block)}" for index, block in enumerate(tables, start=1)
    )
    return (
        f'<section class="page" id="page-{number}"><h2>Page {number}'
        f'<span class="verdict {escape(verdict)}">{escape(verdict)}</span>'
        f" <small>text from {escape(str(page.get('text_source', 'ocr')))}</small></h2>{flagged}"
        f'<div class="sheet"><figure class="picture">{_figure(page, picture)}</figure>'
        f'<div class="tables">{tables_html}</div></div></section>'
    )


def _figure(page: dict[str, Any], picture: Image.Image | str | None) -> str:
    if picture is None:
        return f'<p class="none">not pictured (only the first {PICTURED_PAGES} pages are)</p>'
    if isinstance(picture, str):
        return f'<p class="none">no picture: {escape(picture)}</p>'
    width, height = picture.size
    # A layout model's page (it has Markdown) shows its typed regions; a text-line model's, the
    # lines it read (its blocks are no more than paragraphs of them).
    shapes = _block_shapes(page) if page.get("markdown") is not None else _line_shapes(page)
    return (
        f'<svg viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg" role="img">'
        f'<image href="{_data_uri(picture)}" width="{width}" height="{height}"/>'
        f"{''.join(shapes)}</svg>"
    )


def _block_shapes(page: dict[str, Any]) -> list[str]:
    """A layout model's blocks, drawn by type; hovering one shows its type and text."""
    lines = page.get("lines", [])
    shapes = []
    for block in page.get("blocks", []):
        kind = str(block.get("type", "text"))
        text = block.get("text") or " ".join(lines[i]["text"] for i in block.get("lines", []))
        tip = f"{kind} ({block.get('label')})" if block.get("label") else kind
        shapes.append(_polygon(f"block {kind}", block["box"], f"{tip}: {text[:300]}"))
    return shapes


def _line_shapes(page: dict[str, Any]) -> list[str]:
    """A text-line model's lines; hovering one shows its text and confidence."""
    shapes = []
    for line in page.get("lines", []):
        confidence = float(line.get("confidence", 1.0))
        kind = "line low" if confidence < LOW_CONFIDENCE else "line"
        shapes.append(_polygon(kind, line["box"], f"{line['text']} ({confidence:.2f})"))
    return shapes


def _polygon(kind: str, box: list[list[float]], tip: str) -> str:
    points = " ".join(f"{float(x):.1f},{float(y):.1f}" for x, y in box)
    return (
        f'<polygon class="{escape(kind)}" points="{points}"><title>{escape(tip)}</title></polygon>'
    )


def _table(block: dict[str, Any]) -> str:
    """A table block's cells as an HTML table, spans kept; every text escaped."""
    cells = block.get("cells") or []
    if not cells:
        return '<p class="none">no cells</p>'
    rows: dict[int, list[dict[str, Any]]] = {}
    for cell in cells:
        rows.setdefault(int(cell["row"]), []).append(cell)
    body = []
    for row in sorted(rows):
        tds = []
        for cell in sorted(rows[row], key=lambda c: int(c["column"])):
            spans = ""
            if int(cell.get("row_span", 1)) > 1:
                spans += f' rowspan="{int(cell["row_span"])}"'
            if int(cell.get("column_span", 1)) > 1:
                spans += f' colspan="{int(cell["column_span"])}"'
            tds.append(f"<td{spans}>{escape(str(cell.get('text', '')))}</td>")
        body.append(f"<tr>{''.join(tds)}</tr>")
    return f"<table>{''.join(body)}</table>"


def _data_uri(picture: Image.Image) -> str:
    if picture.width > PICTURE_WIDTH:
        height = max(1, round(picture.height * PICTURE_WIDTH / picture.width))
        picture = picture.resize((PICTURE_WIDTH, height), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    picture.convert("RGB").save(buffer, "JPEG", quality=80)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
