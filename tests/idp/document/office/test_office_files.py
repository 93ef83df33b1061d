"""What an Office file is, and what is refused before the converter opens it: formats told by
their containers' directories (never by name), encrypted packages, broken ones and ZIP bombs."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from devkit.office_samples import SAMPLES, sample_bytes, saved_as
from idp.contract.errors import (
    CorruptDocument,
    EncryptedDocument,
    InputTooLarge,
    UnsupportedMediaType,
)
from idp.contract.names import MediaType
from idp.document.media_types import detect_media_type
from idp.document.office.libreoffice import LibreOffice
from idp.document.office.preflight import PackageLimits, check_office_file
from tests.idp.document.office import files
from tests.paths import REPO_ROOT

SMALL_LIMITS = PackageLimits(max_unpacked_bytes=32 * 1024 * 1024)


@pytest.mark.parametrize(
    ("key", "media_type"),
    [
        ("docx-table", MediaType.DOCX),
        ("pptx-table", MediaType.PPTX),
        ("xlsx-five-sheets", MediaType.XLSX),
        ("odt-poem", MediaType.ODT),
    ],
)
def test_real_office_files_are_told_by_their_content(key: str, media_type: MediaType) -> None:
    data = sample_bytes(key)
    assert detect_media_type(data) is media_type
    check_office_file(data, media_type)  # a real document passes the checks


@pytest.mark.parametrize(
    ("key", "export", "media_type"),
    [
        ("docx-table", "doc:MS Word 97", MediaType.DOC),
        ("docx-table", "rtf", MediaType.RTF),
        ("pptx-table", "ppt", MediaType.PPT),
        ("pptx-table", "odp", MediaType.ODP),
        ("xlsx-five-sheets", "xls:MS Excel 97", MediaType.XLS),
        ("xlsx-five-sheets", "ods", MediaType.ODS),
    ],
)
def test_legacy_and_open_formats_are_told_by_their_content(
    key: str, export: str, media_type: MediaType, tmp_path: Path
) -> None:
    # GIVEN a real sample saved by LibreOffice as DOC, RTF, PPT, ODP, XLS or ODS
    data = saved_as(sample_bytes(key), SAMPLES[key].suffix, export, tmp_path)

    # THEN its content says which it is, and it passes the checks
    assert detect_media_type(data) is media_type
    check_office_file(data, media_type)


def test_a_zip_that_is_no_office_document_is_named_as_such() -> None:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as package:
        package.writestr("notes.txt", "hello")
    with pytest.raises(UnsupportedMediaType, match="a ZIP archive that is no Office document"):
        detect_media_type(archive.getvalue())


def test_an_encrypted_docx_is_refused_before_conversion() -> None:
    with pytest.raises(EncryptedDocument, match="password-protected"):
        detect_media_type(files.encrypted_docx())


def test_an_encrypted_odt_is_refused() -> None:
    data = files.encrypted_odt()
    assert detect_media_type(data) is MediaType.ODT
    with pytest.raises(EncryptedDocument, match="ODT file is encrypted"):
        check_office_file(data, MediaType.ODT)


def test_a_truncated_docx_is_corrupt() -> None:
    with pytest.raises(CorruptDocument, match="ZIP archive but cannot be read"):
        detect_media_type(files.truncated_docx())


def test_a_zip_bomb_is_refused_by_its_declared_size() -> None:
    data = files.zip_bomb_docx(unpacked=64 * 1024 * 1024)
    assert len(data) < 1024 * 1024
    with pytest.raises(InputTooLarge, match="declares that it unpacks to 64 MB"):
        check_office_file(data, MediaType.DOCX, SMALL_LIMITS)


def test_a_zip_bomb_that_lies_about_its_size_is_stopped_while_it_inflates() -> None:
    # GIVEN a bomb whose part declares 1 KB and inflates to 64 MB
    data = files.lying_zip_bomb_docx(unpacked=64 * 1024 * 1024)

    # THEN the check never holds more than the budget: it stops at the limit, or at the part's
    # first byte past its declared size (its checksum then fails)
    with pytest.raises((InputTooLarge, CorruptDocument)):
        check_office_file(data, MediaType.DOCX, SMALL_LIMITS)


def test_too_many_parts_are_refused() -> None:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as package:
        package.writestr("[Content_Types].xml", "<Types/>")
        package.writestr("word/document.xml", "<w:document/>")
        for number in range(50):
            package.writestr(f"word/media/{number}.bin", b"x")
    with pytest.raises(InputTooLarge, match="holds 52 parts"):
        check_office_file(archive.getvalue(), MediaType.DOCX, PackageLimits(max_entries=40))


def test_a_calibri_document_keeps_its_pages_in_carlito(tmp_path: Path) -> None:
    # GIVEN the demo letter as Word saves it: Calibri, a page break between its two pages
    data = (REPO_ROOT / "samples" / "sample-letter.docx").read_bytes()

    # WHEN LibreOffice converts it
    converted = LibreOffice(work_root=tmp_path).convert(data, MediaType.DOCX)

    # THEN Calibri is set in its metric-compatible twin, Carlito, and the pages hold
    reader = PdfReader(io.BytesIO(converted.pdf))
    assert len(reader.pages) == 2
    fonts: set[str] = set()
    for page in reader.pages:
        resources: Any = page["/Resources"]
        fonts |= {str(font["/BaseFont"]) for font in resources["/Font"].values()}
    assert fonts
    assert all(font.endswith("+Carlito") for font in fonts), fonts
