"""Text as a PDF's text layer gives it → text as the page shows it.

Lines keep what is visible on the page, so each line's box frames exactly its text: a word
hyphenated at the end of a line keeps its hyphen (the next line carries the rest), as OCR
would read it. Ligature glyphs become their letters; the rest is NFC.
"""

from __future__ import annotations

import unicodedata
from typing import Final

SOFT_HYPHEN: Final = "\u00ad"
# PDFium's marks for a hyphen that ends a line (FPDFText_IsHyphen): it drops the line break.
PDFIUM_HYPHEN_MARKS: Final = frozenset({"\x02", "\ufffe"})
_LIGATURES: Final = range(0xFB00, 0xFB07)  # ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ
_SPACES: Final = frozenset({"\u00a0", "\u2007", "\u202f", "\t"})


def normalize_line(text: str) -> str:
    """One line of the layer, normalized: ligatures split (NFKC of the ligature only, so other
    compatibility characters such as ² or ½ stay as printed), soft hyphens shown only where they
    break the line, no-break spaces as spaces, whitespace runs collapsed."""
    chars: list[str] = []
    for char in text:
        if ord(char) in _LIGATURES:
            chars.append(unicodedata.normalize("NFKC", char))
        elif char in _SPACES:
            chars.append(" ")
        else:
            chars.append(char)
    joined = "".join(chars).rstrip()
    if joined.endswith(SOFT_HYPHEN):
        joined = joined[:-1] + "-"  # a soft hyphen that breaks a line is drawn
    joined = joined.replace(SOFT_HYPHEN, "")  # elsewhere it is invisible
    return unicodedata.normalize("NFC", " ".join(joined.split()))


def is_unreadable(char: str) -> bool:
    """A character that cannot be what a page shows: no Unicode mapping, a control, or a
    private-use code point (fonts without a ToUnicode map often give these)."""
    category = unicodedata.category(char)
    return (
        char == "\ufffd"
        or category in ("Co", "Cs", "Cn")
        or (category == "Cc" and char not in "\r\n\t")
    )
