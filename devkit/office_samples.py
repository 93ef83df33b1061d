"""Real Office documents for the tests and benchmarks/office.py, from other projects' own test
suites on PyPI (their sdists), pinned by version and sha256 (archive and member), fetched with
pip on first use and cached under CACHE_DIR (git-ignored). Nothing is vendored.

Licences (each sdist's own): python-docx 1.2.0 and python-pptx 1.0.2, MIT (Steve Canny);
xlsx2csv 0.8.6, MIT (Dilshod Temirkhodjaev); odfpy 1.4.1, Apache-2.0 (or GPL-2.0+, LGPL-2.1+).

The documents' own text, the truth a conversion is scored against, is read by python-docx,
python-pptx, openpyxl and odfpy (`own_text`).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from devkit.pinned_sdists import member_bytes, sdist_bytes

REPO_ROOT: Final = Path(__file__).resolve().parent.parent
CACHE_DIR: Final = REPO_ROOT / ".cache" / "office_samples"


@dataclass(frozen=True)
class Sdist:
    requirement: str
    file: str
    sha256: str
    licence: str


SDISTS: Final = {
    "python-docx": Sdist(
        "python-docx==1.2.0",
        "python_docx-1.2.0.tar.gz",
        "7bc9d7b7d8a69c9c02ca09216118c86552704edc23bac179283f2e38f86220ce",
        "MIT",
    ),
    "python-pptx": Sdist(
        "python-pptx==1.0.2",
        "python_pptx-1.0.2.tar.gz",
        "479a8af0eaf0f0d76b6f00b0887732874ad2e3188230315290cd1f9dd9cc7095",
        "MIT",
    ),
    "xlsx2csv": Sdist(
        "xlsx2csv==0.8.6",
        "xlsx2csv-0.8.6.tar.gz",
        "618fc502612860de8ab8e3d6195e99ef332fffc68337f6b89e59690aad0d20b5",
        "MIT",
    ),
    "odfpy": Sdist(
        "odfpy==1.4.1",
        "odfpy-1.4.1.tar.gz",
        "db766a6e59c5103212f3cc92ec8dd50a0f3a02790233ed0b52148b70d3c438ec",
        "Apache-2.0",
    ),
}


@dataclass(frozen=True)
class Sample:
    sdist: str  # a key of SDISTS
    member: str  # inside the sdist
    sha256: str
    what: str

    @property
    def suffix(self) -> str:
        return Path(self.member).suffix


SAMPLES: Final = {
    # A Word document of a styled 4 x 5 table (Calibri: set in Carlito once converted).
    "docx-table": Sample(
        "python-docx",
        "python_docx-1.2.0/features/steps/test_files/tbl-having-applied-style.docx",
        "761802878f363b57dce41b77657946ae5dc70d745261561242c9ed5a769260d9",
        "DOCX: a styled table",
    ),
    # Paragraphs with hyperlinks split across runs.
    "docx-hyperlinks": Sample(
        "python-docx",
        "python_docx-1.2.0/features/steps/test_files/par-hlink-frags.docx",
        "28a23ab5ad87a927fcf1e82111ee6843e1f9bc29b3e2d825b869b41847a750bf",
        "DOCX: paragraphs with hyperlinks",
    ),
    "pptx-paragraphs": Sample(
        "python-pptx",
        "python_pptx-1.0.2/features/steps/test_files/txt-paragraph-spacing.pptx",
        "99d25f1822fd3afd84352fbc8f95bfa116edf96c40abb9568bced8fc996818ea",
        "PPTX: 3 slides of text boxes",
    ),
    "pptx-table": Sample(
        "python-pptx",
        "python_pptx-1.0.2/features/steps/test_files/tbl-cell.pptx",
        "02df45aad4927c4c471d76d4f638e82e14c42d4db773103cf8f950f73b0ae976",
        "PPTX: 3 slides of tables",
    ),
    "xlsx-five-sheets": Sample(
        "xlsx2csv",
        "xlsx2csv-0.8.6/test/xlsx2csv-test-file.xlsx",
        "ec595db1691fccc21e8a653a648a9667ac1d527a76f303cf0b6bf91be5f9b3d1",
        "XLSX: 5 sheets of 10-44 rows (numbers, dates, text)",
    ),
    "odt-poem": Sample(
        "odfpy",
        "odfpy-1.4.1/tests/examples/serious_poem.odt",
        "db82f826adacce08f87a3054d2f57892a84dbb140905ea8b21a11cd5dae00089",
        "ODT: a poem in styled paragraphs",
    ),
    "odt-styles": Sample(
        "odfpy",
        "odfpy-1.4.1/tests/examples/parastyles.odt",
        "5c1e9ea9d36dd36d99880e95eab27cf5f31a90411a00e97b56aff4a779653dea",
        "ODT: paragraph and character styles (super- and subscripts)",
    ),
    # Labels of floating frames beside the text: their place in the reading order is the
    # layout's, so the text's order differs from the file's (benchmarks/office.py shows it).
    "odt-images": Sample(
        "odfpy",
        "odfpy-1.4.1/tests/examples/imageslabels.odt",
        "8a6a31268dda63a5dc6af18f8229891facc8a25e296f24c4ecb976c6d0ad59ff",
        "ODT: text around labelled images",
    ),
    "odt-manual": Sample(
        "odfpy",
        "odfpy-1.4.1/api-for-odfpy.odt",
        "a1fa31f5317f40f0de5d5837528fb34967b4043b236a63c27b6d65755a006e97",
        "ODT: odfpy's API manual (88 pages)",
    ),
}


def sample_bytes(key: str, cache: Path = CACHE_DIR) -> bytes:
    """The sample's bytes, checked against its pin (its sdist fetched on first use)."""
    sample = SAMPLES[key]
    sdist = SDISTS[sample.sdist]
    archive = sdist_bytes(sdist.requirement, sdist.file, sdist.sha256, cache)
    return member_bytes(archive, sample.member, sample.sha256, what=sdist.file)


def sample_path(key: str, directory: Path, cache: Path = CACHE_DIR) -> Path:
    """The sample written to `directory` under its key and its own suffix."""
    path = directory / f"{key}{SAMPLES[key].suffix}"
    path.write_bytes(sample_bytes(key, cache))
    return path


def own_text(path: Path) -> str:
    """The document's own text, as its format's reader gives it: paragraphs and table cells
    (python-docx), text frames and table cells (python-pptx), every cell value (openpyxl),
    paragraphs and headings (odfpy); whitespace-separated, in the document's order."""
    readers = {".docx": _docx_text, ".pptx": _pptx_text, ".xlsx": _xlsx_text, ".odt": _odt_text}
    reader = readers.get(path.suffix.lower())
    if reader is None:
        raise ValueError(f"no reader of its own text for {path.name}")
    return " ".join(" ".join(reader(path)).split())


def _docx_text(path: Path) -> list[str]:
    import docx

    parts: list[str] = []
    for block in docx.Document(str(path)).iter_inner_content():
        if hasattr(block, "rows"):
            parts += [cell.text for row in block.rows for cell in row.cells]
        else:
            parts.append(block.text)
    return parts


def _pptx_text(path: Path) -> list[str]:
    import pptx

    parts: list[str] = []
    for slide in pptx.Presentation(str(path)).slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                parts.append(shape.text_frame.text)
            if getattr(shape, "has_table", False) and shape.has_table:
                parts += [cell.text for row in shape.table.rows for cell in row.cells]
    return parts


def _xlsx_text(path: Path) -> list[str]:
    import openpyxl

    workbook = openpyxl.load_workbook(str(path), data_only=True)
    return [
        str(value)
        for sheet in workbook.worksheets
        for row in sheet.iter_rows(values_only=True)
        for value in row
        if value is not None
    ]


def _odt_text(path: Path) -> list[str]:
    from odf import teletype
    from odf.opendocument import load

    parts: list[str] = []

    def walk(node: object) -> None:
        # Paragraphs and headings in document order, each read whole.
        for child in getattr(node, "childNodes", []):
            if getattr(child, "qname", (None, None))[1] in {"p", "h"}:
                parts.append(teletype.extractText(child))
            else:
                walk(child)

    walk(load(str(path)).text)
    return parts


def saved_as(data: bytes, suffix: str, export: str, folder: Path) -> bytes:
    """`data` (a document of `suffix`) saved by LibreOffice in another format (`export`, a
    --convert-to target such as "doc:MS Word 97" or "ods"): the legacy and open formats made
    from the real samples."""
    source = folder / f"source{suffix}"
    source.write_bytes(data)
    out = folder / f"saved-{suffix.strip('.')}-{export.split(':', maxsplit=1)[0]}"
    command = ["soffice", f"-env:UserInstallation={(folder / 'profile').as_uri()}", "--headless"]
    command += ["--convert-to", export, "--outdir", str(out), str(source)]
    subprocess.run(command, capture_output=True, check=True, timeout=300)
    (written,) = out.iterdir()
    return written.read_bytes()
