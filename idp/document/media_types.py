"""What a document's bytes are, judged by content (magic bytes), not by the file's name."""

from __future__ import annotations

import io
import zipfile
from typing import Final

from idp.contract.errors import CorruptDocument, EmptyInput, EncryptedDocument, UnsupportedMediaType
from idp.contract.names import MediaType

SUPPORTED_FORMATS: Final = (
    "PDF, PNG, JPEG, TIFF, BMP, WEBP, HEIC/HEIF, AVIF, "
    "DOCX, DOC, ODT, RTF, PPTX, PPT, ODP, XLSX, XLS, ODS"
)

# A PDF's header may follow up to 1 KiB of leading junk (readers accept it).
_PDF_HEADER_WINDOW: Final = 1024
_ZIP_SIGNATURE: Final = b"PK\x03\x04"
_OLE2_SIGNATURE: Final = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

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
    (b"PK\x03\x04", "a ZIP archive that is no Office document"),
    (_OLE2_SIGNATURE, "an OLE2 file that is no Word, Excel or PowerPoint document"),
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
    if (office := office_format(data)) is not None:
        return office
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


# An ODF package names its type in its first entry, `mimetype`, stored uncompressed.
_ODF_TYPES: Final = {
    b"application/vnd.oasis.opendocument.text": MediaType.ODT,
    b"application/vnd.oasis.opendocument.spreadsheet": MediaType.ODS,
    b"application/vnd.oasis.opendocument.presentation": MediaType.ODP,
}
# An OOXML package by the part that holds its body (macro-enabled variants included: their
# macros are never run).
_OOXML_PARTS: Final = {
    "word/document.xml": MediaType.DOCX,
    "xl/workbook.xml": MediaType.XLSX,
    "ppt/presentation.xml": MediaType.PPTX,
}
# A legacy binary Office file (an OLE2 compound file) by its main stream.
_OLE2_STREAMS: Final = {
    "worddocument": MediaType.DOC,
    "workbook": MediaType.XLS,
    "book": MediaType.XLS,  # Excel 5/95
    "powerpoint document": MediaType.PPT,
}


def office_format(data: bytes) -> MediaType | None:
    """The Office format of `data` (DOCX, DOC, ODT, RTF, PPTX, PPT, ODP, XLSX, XLS, ODS), or
    None. Reads only the container's directory (ZIP central directory, OLE2 directory), never a
    document part. An encrypted (password-protected) Office file raises EncryptedDocument."""
    if data.startswith(b"{\\rtf"):
        return MediaType.RTF
    if data.startswith(_ZIP_SIGNATURE):
        return _zip_office_format(data)
    if data.startswith(_OLE2_SIGNATURE):
        return _ole2_office_format(data)
    return None


def _zip_office_format(data: bytes) -> MediaType | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            names = set(package.namelist())
            if "mimetype" in names:
                mimetype = package.read("mimetype").strip()
                if mimetype in _ODF_TYPES:
                    return _ODF_TYPES[mimetype]
            for part, media_type in _OOXML_PARTS.items():
                if part in names:
                    return media_type
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as exc:
        raise CorruptDocument(
            f"the file starts as a ZIP archive but cannot be read: {exc}"
        ) from None
    return None


def _ole2_office_format(data: bytes) -> MediaType | None:
    import olefile  # a small, pure-Python reader of the compound-file directory (BSD)

    try:
        with olefile.OleFileIO(io.BytesIO(data)) as ole:
            streams = {"/".join(entry).lower() for entry in ole.listdir(streams=True)}
    except (OSError, ValueError, IndexError, KeyError) as exc:
        raise CorruptDocument(
            f"the file starts as an OLE2 compound file but cannot be read: {exc}"
        ) from None
    if "encryptedpackage" in streams:
        # Office 2007+ saves a password-protected DOCX, XLSX or PPTX as an OLE2 file holding
        # the encrypted package.
        raise EncryptedDocument(
            "the Office document is encrypted (password-protected) and cannot be opened; "
            "upload it without a password"
        )
    for stream, media_type in _OLE2_STREAMS.items():
        if stream in streams:
            return media_type
    return None
