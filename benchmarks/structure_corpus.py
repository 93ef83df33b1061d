"""The table-and-form corpus of benchmarks/structure.py as every engine is given it: each page of
benchmarks/corpora/structure.toml rendered as a damaged scan, with what its tables hold and
what it reads.

Truth comes from each PDF's own text layer, never from an engine:
- tables: pdfplumber's table finder, run on the part of the page that holds one table with the
  settings structure.toml gives it: its ruling lines where it is fully ruled; its rules between
  rows and word alignment across them where only rows are ruled; unruled, columns at the
  vertical gaps no word crosses and rows between lines of text (or boundaries set by hand).
  Each table is a grid of cell texts (whitespace collapsed; None where a merged cell covers
  the slot) and its box; every grid was read by eye against the page;
- text: the page's text layer in reading order (real_corpus.layer_text).
Each page is rendered as a damaged greyscale scan (real_corpus.damaged_scan, then JPEG) and
saved as a PNG; the tables' boxes are carried into its pixels. Everything rendered or
extracted is cached under CACHE_DIR (git-ignored).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import re
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.corpora import (
    Box,
    CorpusError,
    Damage,
    StructurePage,
    TableSpec,
    structure_pages,
    table_pages,
)
from benchmarks.corpora.fetch import REPO_ROOT, sha256_of, source_path
from benchmarks.real_corpus import damaged_scan, layer_text, render_grey

if TYPE_CHECKING:
    from PIL import Image

CACHE_DIR = REPO_ROOT / ".cache" / "structure"
TRUTH_VERSION = 2  # bump when the truth's extraction changes: cached truth is then rebuilt

Grid = list[list[str | None]]  # rows of cell texts; None: a slot a merged cell covers

# Two strategies of this module's own, turned into pdfplumber's explicit lines by read_table:
# a column boundary in every vertical gap that no word crosses (GAP_POINTS wide at least),
# and a row boundary between every two lines of text. Right-aligned numbers under wider
# headers are where pdfplumber's own text strategy splits words.
GAPS = "gaps"
TEXT_LINES = "text_lines"
GAP_POINTS = 5.0

# ---------------------------------------------------------------------------------- truth
# Private-use glyphs (a Symbol font's bullets) have no text to read.
_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")


def cell_text(text: str | None) -> str | None:
    """A cell's text as the truth holds it: whitespace runs as one space, no private-use
    glyphs; None (a merged cell's covered slot) stays None."""
    if text is None:
        return None
    return " ".join(_PRIVATE_USE.sub(" ", text).split())


@dataclass(frozen=True)
class TruthTable:
    """What a table holds and where it is."""

    grid: Grid
    bbox_pt: Box  # in PDF points from the page's top-left corner
    bbox_px: Box  # in the damaged scan's pixels

    @property
    def rows(self) -> int:
        return len(self.grid)

    @property
    def columns(self) -> int:
        return max((len(row) for row in self.grid), default=0)


def column_edges(crop: Any, min_gap: float = GAP_POINTS) -> list[float]:
    """Column boundaries of an unruled table: the middle of every vertical strip at least
    `min_gap` wide that no word of the table crosses, and its outer edges."""
    spans = sorted((float(word["x0"]), float(word["x1"])) for word in crop.extract_words())
    if not spans:
        raise CorpusError("no words in the table's region")
    edges = [spans[0][0] - 1.0]
    reach = spans[0][1]
    for start, end in spans[1:]:
        if start - reach >= min_gap:
            edges.append((reach + start) / 2)
        reach = max(reach, end)
    return [*edges, reach + 1.0]


def row_edges(crop: Any) -> list[float]:
    """Row boundaries of a table whose rows are single lines: between every two lines."""
    lines = crop.extract_text_lines()
    if not lines:
        raise CorpusError("no text lines in the table's region")
    middles = [(above["bottom"] + below["top"]) / 2 for above, below in pairwise(lines)]
    return [lines[0]["top"] - 1.0, *middles, lines[-1]["bottom"] + 1.0]


def read_table(pdf_page: Any, spec: TableSpec) -> tuple[Grid, Box]:
    """The one table pdfplumber finds in the spec's region: its grid and its box (points).
    Where rows come from the text rather than from ruling lines, a row with no text is the
    gap between two lines, not a row of the table, and is left out. Region and box are in
    points from the top left of the page's crop box, which is what the scan shows."""
    left, top = pdf_page.cropbox[0], pdf_page.cropbox[1]
    x0, y0, x1, y1 = spec.region
    crop = pdf_page.crop((left + x0, top + y0, left + x1, top + y1))
    settings = dict(spec.settings)
    if settings.get("vertical_strategy") == GAPS:
        settings["vertical_strategy"] = "explicit"
        settings["explicit_vertical_lines"] = column_edges(crop)
    if settings.get("horizontal_strategy") == TEXT_LINES:
        settings["horizontal_strategy"] = "explicit"
        settings["explicit_horizontal_lines"] = row_edges(crop)
    found = crop.find_tables(settings)
    if len(found) != 1:
        raise CorpusError(f"region {spec.region}: pdfplumber found {len(found)} tables, not 1")
    table = found[0]
    grid = [[cell_text(cell) for cell in row] for row in table.extract()]
    if settings["horizontal_strategy"] != "lines":
        grid = [row for row in grid if any(row)]
    bx0, by0, bx1, by1 = table.bbox
    return grid, (bx0 - left, by0 - top, bx1 - left, by1 - top)


def page_truth_tables(path: Path, page: StructurePage) -> list[tuple[Grid, Box]]:
    """The page's tables as pdfplumber reads them; none, without opening it, where the page
    has none (pdfminer finds no pages in some forms that poppler and pdfium read)."""
    if not page.tables:
        return []
    import pdfplumber

    with pdfplumber.open(str(path)) as pdf:
        pdf_page = pdf.pages[page.page - 1]
        return [read_table(pdf_page, spec) for spec in page.tables]


# ------------------------------------------------------------------------------ rendering
def scan_box(
    box_pt: Box, damage: Damage, clean_size: tuple[int, int], scan_size: tuple[int, int]
) -> Box:
    """A box in page points carried into the damaged scan: scaled to the render's pixels,
    turned with the page about its centre (PIL turns counter-clockwise, growing the image),
    and boxed again upright."""
    scale = damage.dpi / 72.0
    (width, height), (scan_width, scan_height) = clean_size, scan_size
    theta = math.radians(damage.angle)
    cos, sin = math.cos(theta), math.sin(theta)
    left, top, right, bottom = (value * scale for value in box_pt)
    xs, ys = [], []
    for x, y in ((left, top), (right, top), (left, bottom), (right, bottom)):
        dx, dy = x - width / 2, y - height / 2
        xs.append(scan_width / 2 + dx * cos + dy * sin)
        ys.append(scan_height / 2 - dx * sin + dy * cos)
    return (
        max(min(xs), 0.0),
        max(min(ys), 0.0),
        min(max(xs), float(scan_width)),
        min(max(ys), float(scan_height)),
    )


def jpeg_round_trip(image: Image.Image, quality: int) -> Image.Image:
    """The scan as a scanner's JPEG leaves it (its blocks and ringing), decoded again."""
    from PIL import Image

    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=quality)
    return Image.open(io.BytesIO(buffer.getvalue())).convert("L")


# ---------------------------------------------------------------------------- preparation
@dataclass(frozen=True)
class PreparedStructurePage:
    """A corpus page as every engine is given it, and what it holds."""

    page: StructurePage
    image: Path  # the damaged scan, a greyscale PNG
    dpi: int
    tables: tuple[TruthTable, ...]
    text: str  # the page's text in reading order


def _truth_key(page: StructurePage) -> str:
    """What the cached scan and truth were made from: made again when any of it changes."""
    spec = (page.source, page.page, page.damage, page.tables, page.text_regions)
    return f"{TRUTH_VERSION}:{sha256_of(repr(spec).encode())[:16]}"


def _truth_json(
    page: StructurePage, source: Path, clean: tuple[int, int], scan: tuple[int, int]
) -> dict[str, Any]:
    tables = []
    for grid, box_pt in page_truth_tables(source, page):
        box_px = scan_box(box_pt, page.damage, clean, scan)
        tables.append({"grid": grid, "bbox_pt": list(box_pt), "bbox_px": list(box_px)})
    return {
        "version": _truth_key(page),
        "tables": tables,
        "text": layer_text(source, page.page, page.text_regions),
    }


def _box(values: list[float]) -> Box:
    left, top, right, bottom = values
    return (float(left), float(top), float(right), float(bottom))


def prepare(page: StructurePage, cache: Path = CACHE_DIR) -> PreparedStructurePage:
    """Fetch the page's source, render its damaged scan and read its truth; all cached."""
    source = source_path(page.source)
    image = cache / "pages" / f"{page.id}.png"
    truth_path = cache / "truth" / f"{page.id}.json"
    truth: dict[str, Any] | None = None
    if truth_path.exists():
        truth = json.loads(truth_path.read_text(encoding="utf-8"))
        if truth is not None and truth.get("version") != _truth_key(page):
            truth = None
    if truth is None or not image.exists():
        clean = render_grey(source, page.page, page.damage.dpi)
        scan = jpeg_round_trip(damaged_scan(clean, page.damage), page.damage.jpeg_quality)
        image.parent.mkdir(parents=True, exist_ok=True)
        scan.save(image, "PNG", dpi=(page.damage.dpi, page.damage.dpi))
        truth = _truth_json(page, source, clean.size, scan.size)
        truth_path.parent.mkdir(parents=True, exist_ok=True)
        truth_path.write_text(json.dumps(truth, ensure_ascii=False, indent=1), encoding="utf-8")
    tables = tuple(
        TruthTable(
            grid=table["grid"],
            bbox_pt=_box(table["bbox_pt"]),
            bbox_px=_box(table["bbox_px"]),
        )
        for table in truth["tables"]
    )
    return PreparedStructurePage(page, image, page.damage.dpi, tables, truth["text"])


# ---------------------------------------------------------------------------------- a look
def _show(prepared: PreparedStructurePage) -> None:
    """Print the page's truth tables, to read them against the page by eye."""
    page = prepared.page
    print(f"== {page.id} ({'held out' if page.held_out else 'tuning'}) {prepared.image}")
    for number, table in enumerate(prepared.tables, 1):
        box = ", ".join(f"{v:.0f}" for v in table.bbox_px)
        print(f"  table {number}: {table.rows} x {table.columns}, px ({box})")
        for row in table.grid:
            print("   |", " | ".join("·" if cell is None else cell for cell in row))
    print(f"  text: {len(prepared.text)} characters: {prepared.text[:160]!r}")


def _outline(prepared: PreparedStructurePage, out: Path) -> None:
    """The scan with its truth tables' boxes drawn on it, to check them by eye."""
    from PIL import Image, ImageDraw

    image = Image.open(prepared.image).convert("RGB")
    draw = ImageDraw.Draw(image)
    for table in prepared.tables:
        draw.rectangle(table.bbox_px, outline=(255, 0, 0), width=4)
    out.parent.mkdir(parents=True, exist_ok=True)
    image.save(out)


def main() -> None:
    parser = argparse.ArgumentParser(description="Prepare the corpus and print its truth.")
    parser.add_argument("--pages", nargs="*", default=[], help="page-id substrings")
    parser.add_argument("--outline", type=Path, help="a folder for scans with truth boxes drawn")
    parser.add_argument(
        "--corpus",
        choices=("structure", "tables"),
        default="structure",
        help="structure.toml's pages, or the table corpus of tables.toml",
    )
    args = parser.parse_args()
    pages = table_pages() if args.corpus == "tables" else structure_pages()
    for page in pages:
        if args.pages and not any(part in page.id for part in args.pages):
            continue
        prepared = prepare(page)
        _show(prepared)
        if args.outline:
            _outline(prepared, args.outline / f"{page.id}.png")


if __name__ == "__main__":
    main()
