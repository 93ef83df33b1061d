"""The real-document corpus of benchmarks/real_documents.py as a user would upload it: each page
of benchmarks/corpora/real_documents.toml made into its input, with its reference text.

Real scans are given to the pipeline as published (the PDF page, or the image file), their
reference typed by eye (benchmarks/corpora/transcriptions/). Born-digital pages are rendered
as damaged greyscale scans (200-300 dpi, skew <= 0.5°, blur, noise, JPEG; one turned
sideways), their own text layer the reference (poppler's `pdftotext -layout`, region by region
in reading order where the page has columns). Everything rendered is cached under CACHE_DIR
(git-ignored).
"""

from __future__ import annotations

import math
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks.corpora import CorpusPage, Damage, Region, transcription
from benchmarks.corpora.fetch import REPO_ROOT, source_path

if TYPE_CHECKING:
    from PIL import Image

CACHE_DIR = REPO_ROOT / ".cache" / "real_documents"


def render_grey(path: Path, page: int, dpi: float) -> Image.Image:
    """The PDF page in grey at `dpi`."""
    import pypdfium2  # type: ignore[import-untyped]

    document = pypdfium2.PdfDocument(str(path))
    try:
        bitmap = document[page - 1].render(scale=dpi / 72.0, grayscale=True, draw_annots=True)
        image: Image.Image = bitmap.to_pil()
        return image.convert("L")
    finally:
        document.close()


def damaged_scan(image: Image.Image, damage: Damage) -> Image.Image:
    """A clean greyscale rendering made to look scanned: skew, blur, noise, uneven light."""
    import numpy as np
    from PIL import Image, ImageFilter

    rng = np.random.default_rng(damage.seed)
    turned = image.rotate(
        damage.angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255
    ).filter(ImageFilter.GaussianBlur(damage.blur))
    grey = np.asarray(turned, dtype=np.float32) + rng.normal(0.0, damage.noise, turned.size[::-1])
    height, width = grey.shape
    # A flatbed's lamp lights the glass unevenly: a faint gradient across the sheet.
    grey -= 12.0 * (np.linspace(0, 1, width)[None, :] * np.linspace(0.3, 1, height)[:, None])
    scan = Image.fromarray(np.clip(grey, 0, 255).astype(np.uint8), "L")
    if damage.turn_cw:
        scan = scan.rotate(-damage.turn_cw, expand=True)  # PIL turns counter-clockwise
    return scan


@dataclass(frozen=True)
class PreparedPage:
    """A corpus page as the user would upload it, and what it should read."""

    page: CorpusPage
    document: Path  # the file given to the pipeline
    page_number: int  # the page of `document` to read
    reference: str | None


def prepare(page: CorpusPage, cache: Path = CACHE_DIR) -> PreparedPage:
    """Fetch the page's source and make its input (a damaged scan for born-digital pages) and
    its reference text; every step is cached."""
    source = source_path(page.source)
    document, number = source, page.page
    if page.damage is not None:
        document, number = cache / "scans" / f"{page.id}.jpg", 1
        if not document.exists():
            document.parent.mkdir(parents=True, exist_ok=True)
            scan = damaged_scan(render_grey(source, page.page, page.damage.dpi), page.damage)
            dpi = (page.damage.dpi, page.damage.dpi)
            scan.save(document, "JPEG", quality=page.damage.jpeg_quality, dpi=dpi)
    reference = None
    if page.typed is not None:
        reference = transcription(page.typed)
    elif page.layer_regions is not None:
        reference = layer_text(source, page.page, page.layer_regions)
    return PreparedPage(page, document, number, reference)


def layer_text(path: Path, page: int, regions: tuple[Region, ...]) -> str:
    """The page's text layer in reading order: `pdftotext -layout` (it keeps line-end hyphens
    as printed, where the default mode joins them), one region after another; without regions,
    the page's crop box (what a viewer shows and render_grey draws)."""
    base = ["pdftotext", "-enc", "UTF-8", "-layout", "-f", str(page), "-l", str(page)]
    crops = [
        ["-x", str(x), "-y", str(y), "-W", str(w), "-H", str(h)]
        for x, y, w, h in regions or shown_region(path, page)
    ] or [[]]
    parts = [
        subprocess.run(
            [*base, *crop, str(path), "-"], capture_output=True, text=True, check=True
        ).stdout
        for crop in crops
    ]
    return "\n".join(parts).strip()


def shown_region(path: Path, page: int) -> tuple[Region, ...]:
    """The page's crop box as a pdftotext region (whole points, from the media box's top left),
    where it is smaller than the media box; none where they are one. pdftotext reads the whole
    media box, crop box or not: the IRS's 2007 tax tables carry a printer's slug above the crop
    box ("Page 44 of 48 … 7:48 - 6-DEC-2007") that no reader of the page can see."""
    import pypdfium2

    document = pypdfium2.PdfDocument(str(path))
    try:
        shown = document[page - 1]
        media, crop = shown.get_mediabox(), shown.get_cropbox()
        rotated = shown.get_rotation() != 0
    finally:
        document.close()
    if rotated or all(abs(a - b) < 0.5 for a, b in zip(media, crop, strict=True)):
        return ()  # a turned page's crop box is not drawn from the top left: read it whole
    left, top = math.floor(crop[0] - media[0]), math.floor(media[3] - crop[3])
    return ((left, top, math.ceil(crop[2] - media[0]) - left, math.ceil(media[3] - crop[1]) - top),)
