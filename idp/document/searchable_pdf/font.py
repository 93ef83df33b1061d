"""The invisible text layer's font: a Type0 font over an embedded glyphless TrueType font.

Every code is a 2-byte CID equal to the character's Unicode code point (BMP), every CID draws
the one empty glyph 500/1000 em wide, and the ToUnicode CMap maps codes back to Unicode, so
text extractors and viewers' copy and search read accents and CJK as they were recognized.
This is the approach of Tesseract's and OCRmyPDF's text-only PDFs. The TrueType bytes come
from scripts/make_glyphless_font.py.
"""

from __future__ import annotations

import base64
import zlib
from typing import Final

GLYPH_WIDTH: Final = 0.5  # advance of every glyph, in text space units (em)
ASCENT: Final = 0.8
DESCENT: Final = -0.2
FONT_NAME: Final = "GlyphLessFont"
_REPLACEMENT: Final = 0xFFFD

GLYPHLESS_TTF: Final = base64.b64decode(
    "AAEAAAAKAIAAAwAgT1MvMkTfQ5AAAAEoAAAAYGNtYXAADABGAAABkAAAACxnbHlmAAAAAAAAAcQAAAABaGVhZC1o"
    "DoYAAACsAAAANmhoZWEDIgEuAAAA5AAAACRobXR4AfQAAAAAAYgAAAAGbG9jYQAAAAAAAAG8AAAABm1heHAAAwAC"
    "AAABCAAAACBuYW1lGZ8ZNAAAAcgAAABycG9zdG1/dc8AAAI8AAAALAABAAAAAQAAqILYAF8PPPUAAwPoAAAAAOco"
    "5tMAAAAA5yjm0wAAAAAAAAAAAAAAAwACAAAAAAAAAAEAAAMg/zgAAAH0AAAAAAAAAAEAAAAAAAAAAAAAAAAAAAAB"
    "AAEAAAACAAAAAAAAAAAAAgAAAAAAAAAAAAAAAAAAAAAAAwH0AZAABQAEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAPz8/PwAAAAAAAAMg/zgAAAMgAMgAAAAAAAAAAAAAAAAAAAAgAAAB9AAA"
    "AAAAAAAAAAIAAAADAAAAFAADAAEAAAAUAAQAGAAAAAIAAgAAAAD//wAA//8AAQAAAAAAAAAAAAAAAAAAAAAABAA2"
    "AAEAAAAAAAEADQAAAAEAAAAAAAIABwANAAMAAQQJAAEAGgAUAAMAAQQJAAIADgAuR2x5cGhMZXNzRm9udFJlZ3Vs"
    "YXIARwBsAHkAcABoAEwAZQBzAHMARgBvAG4AdABSAGUAZwB1AGwAYQByAAAAAgAAAAAAAAAAAAAAAAAAAAAAAAAA"
    "AAAAAAAAAAAAAAACAAABAgVnbHlwaA=="
)


def encode_text(text: str) -> bytes:
    """`text` as a PDF hex string of 2-byte codes (Identity-H); beyond the BMP: U+FFFD."""
    codes = []
    for char in text:
        point = ord(char)
        if point > 0xFFFF or 0xD800 <= point <= 0xDFFF:
            point = _REPLACEMENT
        codes.append(f"{point:04X}")
    return f"<{''.join(codes)}>".encode()


def to_unicode_cmap() -> bytes:
    """A CMap that maps each 2-byte code to the same Unicode code point (surrogates excluded)."""
    ranges = [
        f"<{high:02X}00> <{high:02X}FF> <{high:02X}00>"
        for high in range(256)
        if not 0xD8 <= high <= 0xDF
    ]
    blocks = []
    for start in range(0, len(ranges), 100):  # at most 100 entries per bfrange block
        chunk = ranges[start : start + 100]
        blocks.append(f"{len(chunk)} beginbfrange\n" + "\n".join(chunk) + "\nendbfrange")
    return (
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
        "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
        + "\n".join(blocks)
        + "\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
    ).encode()


def cid_to_gid_map() -> bytes:
    """Flate-compressed CIDToGIDMap: every CID draws glyph 1 (the empty one)."""
    return zlib.compress(b"\x00\x01" * 65536, 9)
