"""What an Office file must pass before a converter opens it: its container is whole, it is
not encrypted, and it does not unpack to more than the converter may hold (a ZIP bomb is refused
before a byte of it reaches the disk).

The ZIP packages (DOCX, XLSX, PPTX, ODT, ODS, ODP) are inflated here entry by entry, counting
the bytes each really gives (a declared size can lie), and stopped at the budget. The legacy
binary formats (DOC, XLS, PPT) are checked for their encryption flags.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from dataclasses import dataclass
from typing import Final

from idp.contract.errors import CorruptDocument, EncryptedDocument, InputTooLarge
from idp.contract.names import MediaType

# What one document may unpack to: LibreOffice holds a document's parts in memory, and the
# converter's /tmp holds the input and its PDF. Real documents measured (benchmarks/office.py)
# unpack to a few MB; 1 GiB leaves ample room for a large deck of photos.
DEFAULT_MAX_UNPACKED_BYTES: Final = 1024 * 1024 * 1024
DEFAULT_MAX_ENTRIES: Final = 20_000
_CHUNK: Final = 1024 * 1024

_ZIP_PACKAGES: Final = frozenset(
    {
        MediaType.DOCX,
        MediaType.XLSX,
        MediaType.PPTX,
        MediaType.ODT,
        MediaType.ODS,
        MediaType.ODP,
    }
)
_ODF: Final = frozenset({MediaType.ODT, MediaType.ODS, MediaType.ODP})

# [MS-DOC] FibBase: the 16-bit flags at offset 0x0A; fEncrypted is bit 8.
_DOC_FLAGS_OFFSET: Final = 0x0A
_DOC_ENCRYPTED: Final = 0x0100
# [MS-XLS] BIFF records: FILEPASS (0x002F) follows the workbook globals' BOF when encrypted.
_XLS_FILEPASS: Final = 0x002F
_XLS_RECORDS_SCANNED: Final = 64


@dataclass(frozen=True)
class PackageLimits:
    max_unpacked_bytes: int = DEFAULT_MAX_UNPACKED_BYTES
    max_entries: int = DEFAULT_MAX_ENTRIES


def check_office_file(
    data: bytes, media_type: MediaType, limits: PackageLimits | None = None
) -> None:
    """Raise the error a user should see for `data` (InputTooLarge, EncryptedDocument,
    CorruptDocument); return when the converter may open it."""
    limits = limits or PackageLimits()
    label = media_type.label
    if media_type in _ZIP_PACKAGES:
        _check_package(data, media_type, label, limits)
    elif media_type is MediaType.DOC:
        _check_doc(data)
    elif media_type is MediaType.XLS:
        _check_xls(data)
    elif media_type is MediaType.PPT:
        _check_ppt(data)


def _check_package(data: bytes, media_type: MediaType, label: str, limits: PackageLimits) -> None:
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as exc:
        raise CorruptDocument(f"the {label} file's ZIP container cannot be read: {exc}") from None
    with package:
        entries = package.infolist()
        if len(entries) > limits.max_entries:
            raise InputTooLarge(
                f"the {label} file holds {len(entries):,} parts; the limit is "
                f"{limits.max_entries:,}"
            )
        declared = sum(entry.file_size for entry in entries)
        if declared > limits.max_unpacked_bytes:
            raise _too_large(label, declared, limits, declared_only=True)
        if any(entry.flag_bits & 0x1 for entry in entries):
            raise _encrypted(label)
        names = {entry.filename for entry in entries}
        if media_type in _ODF:
            if _odf_encrypted(package, names):
                raise _encrypted(label)
        elif "[Content_Types].xml" not in names:
            raise CorruptDocument(
                f"the {label} file has no [Content_Types].xml: it is not a whole Office package"
            )
        unpacked = 0
        for entry in entries:
            unpacked = _inflate(package, entry, unpacked, label, limits)


def _inflate(
    package: zipfile.ZipFile,
    entry: zipfile.ZipInfo,
    unpacked: int,
    label: str,
    limits: PackageLimits,
) -> int:
    """Inflate `entry` into nothing, counting its real bytes on top of `unpacked`."""
    try:
        with package.open(entry) as stream:
            while chunk := stream.read(_CHUNK):
                unpacked += len(chunk)
                if unpacked > limits.max_unpacked_bytes:
                    raise _too_large(label, unpacked, limits, declared_only=False)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as exc:
        raise CorruptDocument(
            f"the {label} file's part {entry.filename!r} cannot be unpacked: {exc}"
        ) from None
    return unpacked


def _odf_encrypted(package: zipfile.ZipFile, names: set[str]) -> bool:
    manifest = "META-INF/manifest.xml"
    if manifest not in names:
        return False
    # An ODF package encrypted with a password lists each encrypted part's encryption-data.
    with package.open(manifest) as stream:
        head = stream.read(4 * _CHUNK)
    return b"encryption-data" in head


def _check_doc(data: bytes) -> None:
    stream = _ole_stream(data, "WordDocument", MediaType.DOC)
    if stream is not None and len(stream) >= _DOC_FLAGS_OFFSET + 2:
        flags = int.from_bytes(stream[_DOC_FLAGS_OFFSET : _DOC_FLAGS_OFFSET + 2], "little")
        if flags & _DOC_ENCRYPTED:
            raise _encrypted(MediaType.DOC.label)


def _check_xls(data: bytes) -> None:
    stream = _ole_stream(data, "Workbook", MediaType.XLS)
    if stream is None:
        stream = _ole_stream(data, "Book", MediaType.XLS)
    if stream is None:
        return
    offset = 0
    for _ in range(_XLS_RECORDS_SCANNED):
        if offset + 4 > len(stream):
            break
        record = int.from_bytes(stream[offset : offset + 2], "little")
        length = int.from_bytes(stream[offset + 2 : offset + 4], "little")
        if record == _XLS_FILEPASS:
            raise _encrypted(MediaType.XLS.label)
        offset += 4 + length


def _check_ppt(data: bytes) -> None:
    # An encrypted PowerPoint 97-2003 deck moves its summary into an "EncryptedSummary" stream.
    import olefile

    try:
        with olefile.OleFileIO(io.BytesIO(data)) as ole:
            if ole.exists("EncryptedSummary"):
                raise _encrypted(MediaType.PPT.label)
    except (OSError, ValueError, IndexError, KeyError) as exc:
        raise CorruptDocument(f"the PPT file cannot be read: {exc}") from None


def _ole_stream(data: bytes, name: str, media_type: MediaType) -> bytes | None:
    """The head of stream `name` of an OLE2 file (None when it has none)."""
    import olefile

    try:
        with olefile.OleFileIO(io.BytesIO(data)) as ole:
            if not ole.exists(name):
                return None
            with ole.openstream(name) as stream:
                return bytes(stream.read(64 * 1024))
    except (OSError, ValueError, IndexError, KeyError) as exc:
        raise CorruptDocument(f"the {media_type.label} file cannot be read: {exc}") from None


def _encrypted(label: str) -> EncryptedDocument:
    return EncryptedDocument(
        f"the {label} file is encrypted (password-protected) and cannot be opened; upload it "
        "without a password"
    )


def _too_large(
    label: str, size: int, limits: PackageLimits, *, declared_only: bool
) -> InputTooLarge:
    how = "declares that it unpacks to" if declared_only else "unpacks to more than"
    return InputTooLarge(
        f"the {label} file {how} {size / 2**20:,.0f} MB; the limit is "
        f"{limits.max_unpacked_bytes / 2**20:,.0f} MB (a ZIP bomb is refused before it is "
        "unpacked)"
    )
