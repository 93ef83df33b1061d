"""Build the glyphless TrueType font in idp/document/searchable_pdf/font.py: one empty glyph.

The searchable PDF's invisible text layer needs an embedded font (viewers otherwise hunt for a
substitute), but never shows a glyph, so one empty glyph 500 units wide serves every code.
Run once with fontTools installed (`pip install fonttools`); font.py holds its base64.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fontTools.fontBuilder import FontBuilder  # type: ignore[import-untyped]
from fontTools.pens.ttGlyphPen import TTGlyphPen  # type: ignore[import-untyped]


def build(out: Path) -> None:
    builder = FontBuilder(1000, isTTF=True)
    builder.setupGlyphOrder([".notdef", "glyph"])
    builder.setupCharacterMap({})
    empty = TTGlyphPen(None).glyph()
    builder.setupGlyf({".notdef": empty, "glyph": empty})
    builder.setupHorizontalMetrics({".notdef": (500, 0), "glyph": (500, 0)})
    builder.setupHorizontalHeader(ascent=800, descent=-200)
    builder.setupNameTable({"familyName": "GlyphLessFont", "styleName": "Regular"})
    builder.setupOS2(sTypoAscender=800, sTypoDescender=-200, usWinAscent=800, usWinDescent=200)
    builder.setupPost()
    builder.save(str(out))


if __name__ == "__main__":
    build(Path(sys.argv[1] if len(sys.argv) > 1 else "glyphless.ttf"))
