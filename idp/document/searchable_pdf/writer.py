"""A PDF written object by object to a file, and pypdf objects copied into it.

Each object goes to the file as soon as it is complete; only the objects' offsets and the page
references stay in memory until the cross-reference table and the page tree end the file. So a
document of any length costs the memory of one page. pypdf reads input PDFs; pages are copied
through `PdfObjectCopier`, which renumbers the objects a page reaches (never its /Parent).
"""

from __future__ import annotations

import io
import zlib
from typing import IO, Final

from pypdf.generic import (
    ArrayObject,
    DictionaryObject,
    IndirectObject,
    PdfObject,
    StreamObject,
)

from idp.document.searchable_pdf import font

_HEADER: Final = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
_CATALOG: Final = 1
_PAGE_TREE: Final = 2
# Page keys that tie a page to its document rather than draw it: never copied.
_SKIPPED_PAGE_KEYS: Final = frozenset({"/Parent", "/Annots", "/B", "/StructParents", "/Thumb"})


def number(value: float) -> str:
    """A PDF real written briefly (no exponent, at most 4 decimals)."""
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


class PdfStreamWriter:
    """Writes a PDF to `out` object by object; `close()` writes the page tree and the xref."""

    def __init__(self, out: IO[bytes]) -> None:
        self._out = out
        self._start = out.tell()
        self._offsets: dict[int, int] = {}
        self._next = _PAGE_TREE + 1
        self._pages: list[int] = []
        self._font: int | None = None
        self._save: int | None = None
        self._restore: int | None = None
        out.write(_HEADER)

    @property
    def page_count(self) -> int:
        return len(self._pages)

    def reserve(self) -> int:
        """A fresh object number, to be written later with `write`."""
        reserved = self._next
        self._next += 1
        return reserved

    def write(self, reserved: int, body: bytes) -> int:
        self._offsets[reserved] = self._out.tell() - self._start
        self._out.write(b"%d 0 obj\n" % reserved + body + b"\nendobj\n")
        return reserved

    def add(self, body: bytes) -> int:
        return self.write(self.reserve(), body)

    def add_stream(self, entries: bytes, data: bytes) -> int:
        """A stream object; `entries` are its dictionary's entries without /Length."""
        body = b"<< " + entries + b" /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"
        return self.add(body)

    def add_page(self, entries: bytes, reserved: int | None = None) -> int:
        """A page of the page tree; `entries` are its keys besides /Type and /Parent."""
        page = self.write(
            reserved if reserved is not None else self.reserve(),
            b"<< /Type /Page /Parent %d 0 R " % _PAGE_TREE + entries + b" >>",
        )
        self._pages.append(page)
        return page

    def text_font(self) -> int:
        """The invisible text layer's Type0 font, written once per file."""
        if self._font is None:
            font_file = self.add_stream(
                b"/Length1 %d /Filter /FlateDecode" % len(font.GLYPHLESS_TTF),
                zlib.compress(font.GLYPHLESS_TTF),
            )
            descriptor = self.add(
                f"<< /Type /FontDescriptor /FontName /{font.FONT_NAME} /Flags 5 "
                f"/FontBBox [0 {int(font.DESCENT * 1000)} 500 {int(font.ASCENT * 1000)}] "
                f"/ItalicAngle 0 /Ascent {int(font.ASCENT * 1000)} "
                f"/Descent {int(font.DESCENT * 1000)} /CapHeight {int(font.ASCENT * 1000)} "
                f"/StemV 80 /FontFile2 {font_file} 0 R >>".encode()
            )
            cid_map = self.add_stream(b"/Filter /FlateDecode", font.cid_to_gid_map())
            cid_font = self.add(
                f"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /{font.FONT_NAME} "
                "/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> "
                f"/FontDescriptor {descriptor} 0 R /DW {int(font.GLYPH_WIDTH * 1000)} "
                f"/CIDToGIDMap {cid_map} 0 R >>".encode()
            )
            to_unicode = self.add_stream(
                b"/Filter /FlateDecode", zlib.compress(font.to_unicode_cmap())
            )
            self._font = self.add(
                f"<< /Type /Font /Subtype /Type0 /BaseFont /{font.FONT_NAME} "
                f"/Encoding /Identity-H /DescendantFonts [{cid_font} 0 R] "
                f"/ToUnicode {to_unicode} 0 R >>".encode()
            )
        return self._font

    def graphics_state_brackets(self) -> tuple[int, int]:
        """Streams holding `q` and `Q`: they wrap a copied page's own content, so whatever
        state it leaves behind never moves the text layer drawn after it."""
        if self._save is None or self._restore is None:
            self._save = self.add_stream(b"", b"q")
            self._restore = self.add_stream(b"", b"Q")
        return self._save, self._restore

    def close(self) -> None:
        kids = " ".join(f"{page} 0 R" for page in self._pages)
        self.write(
            _PAGE_TREE,
            f"<< /Type /Pages /Kids [{kids}] /Count {len(self._pages)} >>".encode(),
        )
        self.write(_CATALOG, b"<< /Type /Catalog /Pages %d 0 R >>" % _PAGE_TREE)
        xref_at = self._out.tell() - self._start
        size = self._next
        lines = [f"xref\n0 {size}\n", "0000000000 65535 f \n"]
        for reserved in range(1, size):
            offset = self._offsets.get(reserved)
            lines.append(
                f"{offset:010d} 00000 n \n" if offset is not None else "0000000000 00000 f \n"
            )
        self._out.write("".join(lines).encode())
        trailer = f"trailer\n<< /Size {size} /Root {_CATALOG} 0 R >>\n"
        self._out.write(f"{trailer}startxref\n{xref_at}\n%%EOF\n".encode())
        self._out.flush()


class PdfObjectCopier:
    """Copies objects of one pypdf-read document into a `PdfStreamWriter`, each once."""

    def __init__(self, writer: PdfStreamWriter) -> None:
        self._writer = writer
        self._numbers: dict[tuple[int, int], int] = {}
        self._pending: list[tuple[int, IndirectObject]] = []

    def page_entries(self, page: DictionaryObject, *, skip: frozenset[str] = frozenset()) -> bytes:
        """The page's drawing keys (boxes, rotation, resources, contents) serialized."""
        return b" ".join(
            self.serialize(key) + b" " + self.serialize(value)
            for key, value in page.items()
            if key not in _SKIPPED_PAGE_KEYS and key not in skip and key != "/Type"
        )

    def serialize(self, obj: PdfObject | str) -> bytes:
        """`obj` as PDF syntax; the objects it refers to are queued and written by `flush`."""
        if isinstance(obj, IndirectObject):
            return b"%d 0 R" % self.reference(obj)
        if isinstance(obj, StreamObject):
            raise TypeError("a stream is written as an object of its own, never inline")
        if isinstance(obj, DictionaryObject):
            entries = b" ".join(
                self.serialize(key) + b" " + self.serialize(value)
                for key, value in obj.items()
                if key != "/Parent"
            )
            return b"<< " + entries + b" >>"
        if isinstance(obj, ArrayObject):
            return b"[" + b" ".join(self.serialize(item) for item in obj) + b"]"
        buffer = io.BytesIO()
        obj.write_to_stream(buffer)  # type: ignore[union-attr]  # names are str subclasses
        return buffer.getvalue()

    def reference(self, ref: IndirectObject) -> int:
        key = (ref.idnum, ref.generation)
        if key not in self._numbers:
            self._numbers[key] = self._writer.reserve()
            self._pending.append((self._numbers[key], ref))
        return self._numbers[key]

    def flush(self) -> None:
        """Write every object queued so far and those they reach."""
        while self._pending:
            reserved, ref = self._pending.pop()
            obj = ref.get_object()
            if isinstance(obj, StreamObject):
                entries = b" ".join(
                    self.serialize(key) + b" " + self.serialize(value)
                    for key, value in obj.items()
                    if key not in ("/Length", "/Parent")
                )
                data = obj._data  # the stream as stored, still encoded: copied, never re-encoded
                self._writer.write(
                    reserved,
                    b"<< "
                    + entries
                    + b" /Length %d >>\nstream\n" % len(data)
                    + data
                    + b"\nendstream",
                )
            elif obj is None:
                self._writer.write(reserved, b"null")
            else:
                self._writer.write(reserved, self.serialize(obj))
