"""What a document's bytes are, judged by content (magic bytes), not by the file's name."""

from __future__ import annotations

from typing import Final

from idp.contract.errors import EmptyInput, UnsupportedMediaType
from idp.contract.names import MediaType

SUPPORTED_FORMATS: Final = "PDF, PNG, JPEG, TIFF, BMP, WEBP, HEIC/HEIF, AVIF"

# A PDF's header may follow up to 1 KiB of leading junk (readers accept it).
_PDF_HEADER_WINDOW: Final = 1024

_IMAGE_SIGNATURES: Final[tuple[tuple[bytes, MediaType], ...]] = (
    (b"\x89PNG\r\n\x1a\n", MediaType.PNG),
    (b"\xff\xd8\xff", MediaType.JPEG),
    (b"II*\x00", MediaType.TIFF),
    (b"MM\x00*", MediaType.TIFF),
    (b"II+\x00", MediaType.TIFF),  # BigTIFF
    (b"MM\x00+", MediaType.TIFF),
    (b"BM", MediaType.BMP),
)

# Formats people upload by mistake, named so the error says what the file really is.
_OTHER_SIGNATURES: Final[tuple[tuple[bytes, str], ...]] = (
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"PK\x03\x04", "a ZIP container (DOCX, XLSX, PPTX, ODT or ZIP)"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an OLE2 file (legacy DOC, XLS or PPT)"),
    (b"{\\rtf", "an RTF document"),
    (b"%!PS", "a PostScript file"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!", "a RAR archive"),
    (b"\x00\x00\x00\x0cjP  ", "a JPEG 2000 image"),
    (b"\xff\x4f\xff\x51", "a JPEG 2000 codestream"),
    (b"\x00\x00\x01\x00", "an ICO icon"),
    (b"8BPS", "a Photoshop document"),
)


def detect_media_type(data: bytes) -> MediaType:
    """The supported media type of `data`, judged by its content alone.

    Raises EmptyInput for zero bytes and UnsupportedMediaType naming what the content is.
    """
    if not data:
        raise EmptyInput("the input file is empty (0 bytes)")
    for signature, media_type in _IMAGE_SIGNATURES:
        if data.startswith(signature):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return MediaType.WEBP
    if (image := _heif_family(data)) is not None:
        return image
    if b"%PDF-" in data[:_PDF_HEADER_WINDOW]:
        return MediaType.PDF
    raise UnsupportedMediaType(
        f"unsupported document format: the content is {describe_content(data)}; "
        f"supported formats are {SUPPORTED_FORMATS}"
    )


# ISO base media files (ftyp box first) that hold a still image: HEIF's brands (a HEVC-coded
# image: what phones save as .heic) and AVIF's (an AV1-coded one). A `mif1` file says which
# coding it holds among its compatible brands.
_HEIF_BRANDS: Final = frozenset({"heic", "heix", "heim", "heis", "hevc", "hevx"})
_AVIF_BRANDS: Final = frozenset({"avif", "avis"})
_MIF_BRANDS: Final = frozenset({"mif1", "msf1", "mif2"})


def _heif_family(data: bytes) -> MediaType | None:
    """HEIF or AVIF by the file's ftyp box (major brand, then compatible brands), else None."""
    if data[4:8] != b"ftyp":
        return None
    size = min(int.from_bytes(data[:4], "big"), len(data), 4096)
    major = data[8:12].decode("ascii", "replace")
    compatible = {
        data[offset : offset + 4].decode("ascii", "replace") for offset in range(16, size - 3, 4)
    }
    brands = {major} | compatible
    if major in _AVIF_BRANDS or (major in _MIF_BRANDS and brands & _AVIF_BRANDS):
        return MediaType.AVIF
    if major in _HEIF_BRANDS or (major in _MIF_BRANDS and brands & (_HEIF_BRANDS | _MIF_BRANDS)):
        return MediaType.HEIF
    return None


def describe_content(data: bytes) -> str:  # noqa: PLR0911 - one answer per kind
    """A short human description of content that is not a supported document."""
    for signature, description in _OTHER_SIGNATURES:
        if data.startswith(signature):
            return description
    if data[4:8] == b"ftyp":
        return "an ISO media file (MP4/MOV video or audio)"
    if data[:4] == b"RIFF":
        return "a RIFF container that is not WEBP (e.g. WAV or AVI)"
    head = data[:4096]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        # A multi-byte character cut at the window edge is still text.
        try:
            text = head[:-3].decode("utf-8")
        except UnicodeDecodeError:
            return "unrecognized binary data"
    lowered = text.lstrip("\ufeff \t\r\n").lower()
    if lowered.startswith(("<!doctype html", "<html")) or "<html" in lowered[:512]:
        return "an HTML document"
    if lowered.startswith("<?xml") or lowered.startswith("<svg"):
        return "an SVG image" if "<svg" in lowered[:1024] else "an XML document"
    if lowered.startswith(("{", "[")):
        return "JSON or other plain text"
    if all(ch.isprintable() or ch in "\t\r\n\f" for ch in text):
        return "plain text"
    return "unrecognized binary data"
