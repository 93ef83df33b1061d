"""A PDF page's text layer as lines of text with boxes in the rendered page's pixel space.

PDFium's text page (pypdfium2) gives the characters in reading order with their boxes in PDF
user space; a line ends where PDFium breaks it (a generated CR LF) or hyphenates it. Boxes go
through the same display matrix the renderer uses (FPDF_PageToDevice), so /Rotate, crop boxes
and the job's pdf_scale are taken into account exactly as for the pixels OCR would read.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, Final

from idp.document.text_layer.normalize import PDFIUM_HYPHEN_MARKS, is_unreadable, normalize_line

# Device coordinates are integers: map onto a grid this many times finer than the page pixels.
_SUBPIXEL: Final = 16
_INVISIBLE_MODES: Final = frozenset({3, 7})  # FPDF_TEXTRENDERMODE_INVISIBLE, _CLIP

Box = tuple[float, float, float, float]  # left, top, right, bottom in rendered page pixels


@dataclass(frozen=True)
class LayerWord:
    text: str
    box: Box
    line: int = -1  # the index of its line in the layer (TextLayer.lines)


@dataclass(frozen=True)
class LayerLine:
    text: str
    box: Box
    words: tuple[LayerWord, ...] = ()  # its whitespace-separated words; () if they don't add up


@dataclass
class TextLayer:
    """What one page's text layer holds, and how much of it can be trusted to be visible text."""

    width: int  # the rendered page, pixels
    height: int
    lines: list[LayerLine] = field(default_factory=list)  # visible lines, reading order
    chars: int = 0  # non-space characters
    invisible_chars: int = 0  # drawn with an invisible render mode (an OCR layer)
    unreadable_chars: int = 0  # no Unicode mapping, control or private-use characters


def rendered_size(page: Any, scale: float) -> tuple[int, int]:
    """The pixel size idp.document.decode renders the page at (rotation included)."""
    import math

    width_pt, height_pt = page.get_size()
    return math.ceil(width_pt * scale), math.ceil(height_pt * scale)


def extract_text_layer(page: Any, *, scale: float) -> TextLayer:
    """The text layer of a pypdfium2 PdfPage, boxes at `scale` pixels per point."""
    import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

    width, height = rendered_size(page, scale)
    layer = TextLayer(width=width, height=height)
    textpage = page.get_textpage()
    try:
        to_pixels = PageToPixels(page.raw, width, height)
        raw = textpage.raw
        left, bottom, right, top = (ctypes.c_double() for _ in range(4))
        modes: dict[int, int] = {}
        line: list[str] = []
        line_box: list[float] | None = None  # PDF space: left, bottom, right, top
        char_boxes: list[list[float] | None] = []  # each of the line's characters'
        line_visible = True

        def flush() -> None:
            nonlocal line, line_box, char_boxes
            text = normalize_line("".join(line))
            if text and line_box is not None and line_visible:
                words = _words(line, char_boxes, text, to_pixels, len(layer.lines))
                layer.lines.append(LayerLine(text=text, box=to_pixels.box(line_box), words=words))
            line, line_box, char_boxes = [], None, []

        for index in range(pdfium_c.FPDFText_CountChars(raw)):
            char = chr(pdfium_c.FPDFText_GetUnicode(raw, index))
            if char in "\r\n":
                flush()
                continue
            hyphen = char in PDFIUM_HYPHEN_MARKS or bool(pdfium_c.FPDFText_IsHyphen(raw, index))
            if hyphen:
                char = "-"
            visible = _is_visible(pdfium_c, raw, index, modes)
            if not char.isspace():
                layer.chars += 1
                layer.invisible_chars += not visible
                unmapped = pdfium_c.FPDFText_HasUnicodeMapError(raw, index)
                layer.unreadable_chars += bool(unmapped) or is_unreadable(char)
            if line and visible != line_visible:
                flush()
            line_visible = visible
            line.append(char)
            char_boxes.append(None)
            if not char.isspace() and pdfium_c.FPDFText_GetCharBox(
                raw, index, left, right, bottom, top
            ):
                box = [left.value, bottom.value, right.value, top.value]
                line_box = box if line_box is None else _union(line_box, box)
                char_boxes[-1] = box
            if hyphen:  # the word goes on in the next line
                flush()
        flush()
    finally:
        textpage.close()
    return layer


def _words(
    chars: list[str],
    boxes: list[list[float] | None],
    text: str,
    to_pixels: PageToPixels,
    line: int,
) -> tuple[LayerWord, ...]:
    """The line's words, each boxed by its glyphs; () unless they read as the line's `text`."""
    words: list[LayerWord] = []
    word: list[str] = []
    word_box: list[float] | None = None
    for char, box in [*zip(chars, boxes, strict=True), (" ", None)]:
        if not char.isspace():
            word.append(char)
            if box is not None:
                word_box = box if word_box is None else _union(word_box, box)
            continue
        word_text = normalize_line("".join(word))
        if word_text and word_box is not None:
            words.append(LayerWord(text=word_text, box=to_pixels.box(word_box), line=line))
        word, word_box = [], None
    if " ".join(word.text for word in words) != text:
        return ()
    return tuple(words)


def _is_visible(pdfium_c: Any, textpage: Any, index: int, modes: dict[int, int]) -> bool:
    obj = pdfium_c.FPDFText_GetTextObject(textpage, index)
    if not obj:
        return True
    key = ctypes.cast(obj, ctypes.c_void_p).value or 0
    if key not in modes:
        modes[key] = int(pdfium_c.FPDFTextObj_GetTextRenderMode(obj))
    return modes[key] not in _INVISIBLE_MODES


def _union(a: list[float], b: list[float]) -> list[float]:
    return [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])]


class PageToPixels:
    """PDF user space → rendered pixels, through the renderer's own display matrix."""

    def __init__(self, page: Any, width: int, height: int) -> None:
        import pypdfium2.raw as pdfium_c

        self._convert = pdfium_c.FPDF_PageToDevice
        self._page = page
        self._size = (width * _SUBPIXEL, height * _SUBPIXEL)
        self._x, self._y = ctypes.c_int(), ctypes.c_int()

    def point(self, x: float, y: float) -> tuple[float, float]:
        self._convert(
            self._page, 0, 0, *self._size, 0, x, y, ctypes.byref(self._x), ctypes.byref(self._y)
        )
        return self._x.value / _SUBPIXEL, self._y.value / _SUBPIXEL

    def box(self, pdf_box: list[float]) -> Box:
        x0, y0 = self.point(pdf_box[0], pdf_box[1])
        x1, y1 = self.point(pdf_box[2], pdf_box[3])
        return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
