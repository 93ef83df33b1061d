"""What a document's bytes are, judged by content (magic bytes), not by the file's name."""

from __future__ import annotations

from typing import Final

from idp.contract.errors import EmptyInput, UnsupportedMediaType
from idp.contract.names import MediaType

SUPPORTED_FORMATS: Final = "PDF, PNG, JPEG, TIFF, BMP, WEBP"

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
    if b"%PDF-" in data[:_PDF_HEADER_WINDOW]:
        return MediaType.PDF
    raise UnsupportedMediaType(
        f"unsupported document format: the content is {describe_content(data)}; "
        f"supported formats are {SUPPORTED_FORMATS}"
    )


def describe_content(data: bytes) -> str:  # noqa: PLR0911 - one answer per kind
    """A short human description of content that is not a supported document."""
    for signature, description in _OTHER_SIGNATURES:
        if data.startswith(signature):
            return description
    if data[4:8] == b"ftyp":
        brand = data[8:12].decode("ascii", "replace")
        if brand in ("heic", "heix", "mif1", "msf1", "avif"):
            return "a HEIF/AVIF image"
        return "an ISO media file (MP4/MOV/HEIF)"
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
