"""Generated born-digital PDFs of known text (fpdf2, a dev-only dependency) for the text-layer
tests and benchmark: vector pages, fine print, scanned pages, invisible text layers, rotation.

Text is set in the font bundled with Pillow (Aileron), so the files are the same on every
machine; the expected text of each page is returned beside the PDF.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Final, Literal

from PIL import ImageFont

from devkit.synthetic import render_page, sample_lines

PageKind = Literal["vector", "scanned", "invisible-layer"]

PAGE_SIZE_PT: Final = (595.0, 842.0)  # A4
MARGIN_PT: Final = 48.0
FONT_SIZE_PT: Final = 11.0
LINE_STEP_PT: Final = 20.0
FINE_PRINT_PT: Final = 2.5  # about 5 px tall at 144 dpi: below what OCR can read
FONT: Final = "aileron"
_LIGATURE_LETTERS: Final = str.maketrans({"ﬁ": "fi", "ﬂ": "fl"})  # the glyphs the font has


@dataclass(frozen=True)
class PageSpec:
    """One page: its visible lines (top to bottom), optional fine print at the foot, and kind.

    `scanned` draws the lines into an image (no text layer); `invisible-layer` does the same and
    adds an invisible text layer that says `layer_text` instead (a bad OCR layer).
    """

    lines: tuple[str, ...]
    fine_print: str | None = None
    kind: PageKind = "vector"
    rotation: Literal[0, 90] = 0  # the page's /Rotate (vector pages)
    layer_text: tuple[str, ...] = field(default_factory=tuple)
    # Vector pages: a picture of these lines below the text (text the layer does not hold).
    picture_lines: tuple[str, ...] = field(default_factory=tuple)
    ruled: bool = False  # vector pages: a rule under every line, like a table

    @property
    def text(self) -> str:
        """What the page shows, line by line, as the text layer should give it back."""
        lines = list(self.lines)
        if self.fine_print:
            lines.append(self.fine_print)
        return "\n".join(lines).translate(_LIGATURE_LETTERS)


@cache
def _font_file() -> Path:
    # fpdf2 embeds TrueType fonts from a file: write Pillow's bundled font out once.
    font = ImageFont.load_default(size=FONT_SIZE_PT)
    if not isinstance(font, ImageFont.FreeTypeFont):
        raise RuntimeError("Pillow's default font is a bitmap font here: FreeType support missing")
    path = Path(tempfile.gettempdir()) / "idp-synthetic-aileron.ttf"
    if not path.exists():
        path.write_bytes(font.font_bytes)
    return path


def born_digital_pdf(pages: list[PageSpec]) -> bytes:
    """A PDF with one page per spec (A4, 11 pt lines from the top-left margin)."""
    from fpdf import FPDF
    from fpdf.enums import TextMode

    pdf = FPDF(unit="pt", format=PAGE_SIZE_PT)
    pdf.set_auto_page_break(auto=False)
    pdf.add_font(FONT, fname=str(_font_file()))
    width, height = PAGE_SIZE_PT
    for spec in pages:
        pdf.add_page()
        if spec.kind == "vector" and spec.rotation:
            # A landscape page kept portrait with /Rotate 90: its text is drawn turned a
            # quarter counter-clockwise, so it reads upright once the viewer rotates the page.
            pdf.set_font(FONT, size=FONT_SIZE_PT)
            for row, line in enumerate(spec.lines):
                x = MARGIN_PT + FONT_SIZE_PT + row * LINE_STEP_PT
                with pdf.rotation(90, x=x, y=height - MARGIN_PT):
                    pdf.text(x, height - MARGIN_PT, line)
            continue
        if spec.kind == "vector":
            pdf.set_font(FONT, size=FONT_SIZE_PT)
            for row, line in enumerate(spec.lines):
                pdf.text(MARGIN_PT, MARGIN_PT + FONT_SIZE_PT + row * LINE_STEP_PT, line)
            if spec.ruled:
                for row in range(len(spec.lines)):
                    y = MARGIN_PT + FONT_SIZE_PT + row * LINE_STEP_PT + 5
                    pdf.line(MARGIN_PT, y, width - MARGIN_PT, y)
            if spec.picture_lines:
                top = MARGIN_PT + (len(spec.lines) + 1) * LINE_STEP_PT
                picture = render_page(
                    spec.picture_lines,
                    size=(int(width - 2 * MARGIN_PT) * 2, len(spec.picture_lines) * 40 + 20),
                    font_size=22,
                    margin=10,
                    line_spacing=40 / 22,
                )
                pdf.image(picture, x=MARGIN_PT, y=top, w=width - 2 * MARGIN_PT)
            if spec.fine_print:
                pdf.set_font(FONT, size=FINE_PRINT_PT)
                pdf.text(MARGIN_PT, height - MARGIN_PT, spec.fine_print)
            continue
        scale = 2  # the image is drawn at 144 dpi, like the pipeline renders a page
        image = render_page(
            spec.lines,
            size=(int(width * scale), int(height * scale)),
            font_size=int(FONT_SIZE_PT * scale),
            margin=int(MARGIN_PT * scale),
            line_spacing=LINE_STEP_PT / FONT_SIZE_PT,
        )
        pdf.image(image, x=0, y=0, w=width, h=height)
        if spec.kind == "invisible-layer":
            pdf.set_font(FONT, size=FONT_SIZE_PT)
            pdf.text_mode = TextMode.INVISIBLE
            for row, line in enumerate(spec.layer_text):
                pdf.text(MARGIN_PT, MARGIN_PT + FONT_SIZE_PT + row * LINE_STEP_PT, line)
            pdf.text_mode = TextMode.FILL
    data = bytes(pdf.output())
    rotations = [(index, spec.rotation) for index, spec in enumerate(pages) if spec.rotation]
    return _rotate(data, rotations) if rotations else data


def _rotate(data: bytes, rotations: Sequence[tuple[int, int]]) -> bytes:
    import pypdfium2  # type: ignore[import-untyped]

    document = pypdfium2.PdfDocument(data)
    try:
        for index, degrees in rotations:
            document[index].set_rotation(degrees)
        buffer = io.BytesIO()
        document.save(buffer)
    finally:
        document.close()
    return buffer.getvalue()


def garbled(lines: tuple[str, ...]) -> tuple[str, ...]:
    """Text of the same shape that says something else (a failed OCR layer)."""
    table = str.maketrans(
        "abcdefghijklmnopqrstuvwxyz0123456789", "qxzjvkwyfpbgmhucldntsaeoir9876543210"
    )
    return tuple(line.translate(table) for line in lines)


def page_lines(number: int, count: int = 30) -> tuple[str, ...]:
    """`count` known lines headed by the page number, so every page's text differs."""
    return (f"Page {number}", *sample_lines(count - 1, offset=number))


def fine_print(number: int) -> str:
    return (
        f"Terms {number}: liability is limited to the invoice total; see clause 14.2 for details."
    )


def mixed_pages() -> list[PageSpec]:
    """The acceptance document: vector, scanned, vector with fine print, invisible bad layer,
    ligatures and hyphenation, and a rotated vector page."""
    scanned_lines = page_lines(2, 6)
    return [
        PageSpec(lines=page_lines(1, 8), fine_print=fine_print(1)),
        PageSpec(lines=scanned_lines, kind="scanned"),
        PageSpec(lines=page_lines(3, 8), fine_print=fine_print(3)),
        PageSpec(
            lines=page_lines(4, 6), kind="invisible-layer", layer_text=garbled(page_lines(4, 6))
        ),
        PageSpec(lines=LIGATURE_LINES),
        PageSpec(lines=page_lines(6, 8), rotation=90),
    ]


# The font has ﬁ and ﬂ glyphs only; hyphenation is a word broken at the end of a line.
LIGATURE_LINES: Final = (
    "The ﬁnal ﬂoor plan was ﬁled on Friday.",
    "A long word is broken by hyphen-",
    "ation at the end of a line.",
)
LIGATURE_TEXT: Final = (
    "The final floor plan was filed on Friday.\n"
    "A long word is broken by hyphen-\n"
    "ation at the end of a line."
)


def benchmark_pages(count: int, lines: int = 12) -> list[PageSpec]:
    """`count` vector pages of `lines` lines with fine print: the text-layer benchmark's
    document."""
    return [
        PageSpec(lines=page_lines(number, lines), fine_print=fine_print(number))
        for number in range(1, count + 1)
    ]


def rule_pages() -> dict[str, list[PageSpec]]:
    """The page kinds the text-layer rule was measured on, three pages each."""
    numbers = (11, 12, 13)
    return {
        "vector": [PageSpec(lines=page_lines(n), fine_print=fine_print(n)) for n in numbers],
        "vector, ruled like a table": [
            PageSpec(lines=page_lines(n, 20), ruled=True) for n in numbers
        ],
        "vector + picture of text": [
            PageSpec(lines=page_lines(n, 12), picture_lines=page_lines(n + 20, 12)) for n in numbers
        ],
        "scanned": [PageSpec(lines=page_lines(n), kind="scanned") for n in numbers],
        "scan + invisible garbled layer": [
            PageSpec(lines=page_lines(n), kind="invisible-layer", layer_text=garbled(page_lines(n)))
            for n in numbers
        ],
        "scan + invisible matching layer": [
            PageSpec(lines=page_lines(n), kind="invisible-layer", layer_text=page_lines(n))
            for n in numbers
        ],
    }
