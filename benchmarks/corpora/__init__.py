"""The benchmark corpora, read from the data files beside this module.

`sources.toml` pins every document (its package and member, by version and sha256, with
both licences); `real_documents.toml`, `structure.toml`, `numbers.toml` and `tables.toml`
list the pages each benchmark reads, with their damage and where their truth comes from;
`transcriptions/` holds the typed references of real scans; `table_cells.toml` the tables of
the table-stage benchmark. Fetching and rendering live in benchmarks.corpora.fetch and the
corpus modules.
"""

from __future__ import annotations

import datetime
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, cast

CORPORA = Path(__file__).resolve().parent

Registry = Literal["pypi", "debian", "debian-source"]
Region = tuple[float, float, float, float]  # x, y, width, height in PDF points of the shown page
Box = tuple[float, float, float, float]  # left, top, right, bottom (PDF points or pixels)


class CorpusError(RuntimeError):
    """A download, a pinned checksum, a conversion or a data file did not give what it should."""


@dataclass(frozen=True)
class Archive:
    """A package as its registry publishes it: a PyPI sdist, a Debian .deb or a Debian source
    package's upstream tarball (its .orig.tar.*)."""

    registry: Registry
    name: str
    version: str
    file: str  # the archive's file name as the registry's client saves it
    sha256: str
    licence: str  # the package's licence, and what it says (or not) about the files used


@dataclass(frozen=True)
class Source:
    """One document inside an archive."""

    archive: str  # key of archives()
    member: str  # path inside the archive
    sha256: str  # of the member as stored
    licence: str  # of the document itself
    postscript_gz: bool = False  # a gzipped PostScript file, converted to PDF with ps2pdf


@dataclass(frozen=True)
class Damage:
    """How a born-digital page is turned into a plausible flatbed scan (seeded: reproducible)."""

    dpi: int
    angle: float  # skew, degrees counter-clockwise
    blur: float  # Gaussian radius, pixels
    noise: float  # standard deviation of grey-level noise
    jpeg_quality: int
    seed: int
    turn_cw: int = 0  # the sheet fed sideways: degrees clockwise


@dataclass(frozen=True)
class CorpusPage:
    """A page of the real-document corpus, the kinds of difficulty it stands for and where its
    reference text comes from."""

    doc: str
    source: str  # key of sources()
    page: int  # 1-based page of the source document
    kinds: tuple[str, ...]
    what: str
    typed: str | None = None  # transcriptions/<typed>.txt: the reference of a real scan
    # Reference from the source's own text layer: regions in reading order, () the whole page.
    layer_regions: tuple[Region, ...] | None = None
    damage: Damage | None = None  # set for born-digital pages: rendered as a damaged scan
    rotation: int = 0  # degrees the page must be turned counter-clockwise to read it upright
    strip_leaders: bool = False  # dot leaders (". . . .") are layout, not text: not scored

    @property
    def id(self) -> str:
        return f"{self.doc}__p{self.page}"

    @property
    def born_digital(self) -> bool:
        return self.damage is not None

    @property
    def has_reference(self) -> bool:
        return self.typed is not None or self.layer_regions is not None


@dataclass(frozen=True)
class TableSpec:
    """Where one table lies on its page and how pdfplumber reads its cells there."""

    region: Box  # left, top, right, bottom in PDF points from the crop box's top-left corner
    settings: Mapping[str, Any]  # pdfplumber table settings that give its true grid


@dataclass(frozen=True)
class StructurePage:
    """A page of the structure or numbers corpus: where it comes from, what it stands for, and
    whether thresholds may be tuned on it."""

    id: str
    source: str  # key of sources()
    page: int  # 1-based page of the source document
    kinds: tuple[str, ...]  # table, form, multi-column (and the finer kinds of real_documents)
    what: str
    held_out: bool
    damage: Damage
    tables: tuple[TableSpec, ...] = ()
    # The text's regions in reading order (x, y, width, height in points); () the whole page.
    text_regions: tuple[Region, ...] = ()
    strip_leaders: bool = False  # dot leaders are layout, not text: not scored
    split: str | None = None  # the table corpus's part: "dev" or "test" (by document)


@dataclass(frozen=True)
class NumberSet:
    """A fresh set of numbers pages, chosen blind and committed before any engine read it."""

    name: str
    date: datetime.date
    looked_at: bool  # its first run is done and its pages were looked at since
    new_documents: bool  # no earlier set or corpus holds its documents
    by_kind: bool  # reported per kind of document as well (invoice, tax, report, form)
    about: str
    pages: tuple[StructurePage, ...]


@dataclass(frozen=True)
class TableCase:
    """A real table for the table-stage benchmark: the PDF page it is on, where, and what it
    holds (files under tests/samples/tables)."""

    name: str
    kind: str  # ruled, unruled, scanned
    pdf: str
    region: Box  # the part of the page that holds the table and nothing else
    truth: str  # CSV: the table's cells, row by row
    dpi: int = 200
    damage: Damage | None = None


def _data(name: str) -> dict[str, Any]:
    path = CORPORA / name
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise CorpusError(f"{path}: {error}") from error


def _box(values: list[float]) -> Box:
    left, top, right, bottom = values
    return (left, top, right, bottom)


def _damage(values: dict[str, Any] | None) -> Damage | None:
    return None if values is None else Damage(**values)


def _pins(kind: str) -> dict[str, dict[str, Any]]:
    """sources.toml's `kind` table, with those of sources/*.toml (pins added a file each)."""
    found = dict(_data("sources.toml")[kind])
    for part in sorted((CORPORA / "sources").glob("*.toml")):
        for key, entry in _data(f"sources/{part.name}").get(kind, {}).items():
            if key in found:
                raise CorpusError(f"sources/{part.name}: {kind} {key!r} is pinned twice")
            found[key] = entry
    return found


@cache
def archives() -> dict[str, Archive]:
    return {key: Archive(**entry) for key, entry in _pins("archives").items()}


@cache
def sources() -> dict[str, Source]:
    return {key: Source(**entry) for key, entry in _pins("sources").items()}


@cache
def transcription(name: str) -> str:
    """A real scan's typed reference (its file ends in one newline that the page lacks)."""
    path = CORPORA / "transcriptions" / f"{name}.txt"
    return path.read_text(encoding="utf-8").removesuffix("\n")


def transcriptions() -> list[str]:
    return sorted(path.stem for path in (CORPORA / "transcriptions").glob("*.txt"))


@cache
def real_pages() -> tuple[CorpusPage, ...]:
    pages = []
    for entry in _data("real_documents.toml")["pages"]:
        regions = entry.pop("layer_regions", None)
        damage = _damage(entry.pop("damage", None))
        entry["kinds"] = tuple(entry["kinds"])
        layer_regions = None if regions is None else tuple(map(_box, regions))
        pages.append(CorpusPage(**entry, layer_regions=layer_regions, damage=damage))
    return tuple(pages)


def _structure_page(
    entry: dict[str, Any], presets: dict[str, Any], *, held_out: bool = True
) -> StructurePage:
    tables = tuple(
        TableSpec(_box(table["region"]), _settings(table["settings"], presets))
        for table in entry.pop("tables", ())
    )
    damage = cast(Damage, _damage(entry.pop("damage")))
    regions = tuple(map(_box, entry.pop("text_regions", ())))
    entry["kinds"] = tuple(entry["kinds"])
    entry.setdefault("held_out", held_out)
    return StructurePage(**entry, damage=damage, tables=tables, text_regions=regions)


def _settings(
    value: str | dict[str, Any], presets: dict[str, Any], corpus: str = "structure.toml"
) -> Mapping[str, Any]:
    """A table's own settings, or the named preset of its corpus file."""
    if isinstance(value, dict):
        return value
    if value not in presets:
        raise CorpusError(f"{corpus}: no table settings named {value!r}")
    return dict(presets[value])


def _reused(entry: dict[str, Any]) -> StructurePage:
    """A born-digital page of the real-document corpus, with its damage and reference regions."""
    pages = [page for page in real_pages() if page.id == entry["reuse"]]
    page = pages[0] if len(pages) == 1 else None
    if page is None or page.damage is None or page.layer_regions is None:
        raise CorpusError(f"{entry['reuse']} is no born-digital page of real_documents.toml")
    if page.damage.turn_cw:
        raise CorpusError(f"{page.id} is turned sideways: no structure page")
    return StructurePage(
        page.id,
        page.source,
        page.page,
        tuple(entry["kinds"]),
        page.what,
        held_out=entry.get("held_out", True),
        damage=page.damage,
        text_regions=page.layer_regions,
        strip_leaders=page.strip_leaders,
    )


@cache
def structure_pages() -> tuple[StructurePage, ...]:
    """The structure corpus's pages, in the order of structure.toml."""
    data = _data("structure.toml")
    presets = data["settings"]
    return tuple(
        _reused(entry) if "reuse" in entry else _structure_page(entry, presets)
        for entry in data["pages"]
    )


@cache
def number_sets() -> tuple[NumberSet, ...]:
    """The fresh sets of numbers pages, oldest first. Every page is held out, its dot leaders
    are layout, and its kinds are "numbers" and its kind of document."""
    sets = []
    for entry in _data("numbers.toml")["sets"]:
        pages = tuple(
            StructurePage(
                page["id"],
                page["source"],
                page["page"],
                ("numbers", *([page["kind"]] if "kind" in page else [])),
                page["what"],
                held_out=True,
                damage=cast(Damage, _damage(page["damage"])),
                strip_leaders=True,
            )
            for page in entry.pop("pages")
        )
        sets.append(NumberSet(**entry, pages=pages))
    return tuple(sets)


@cache
def table_pages() -> tuple[StructurePage, ...]:
    """The table corpus's pages, document by document as tables.toml lists them. Every page is
    held out; its kinds are its document's (what kind of table) and its own (the table's
    shape); its split is its document's."""
    data = _data("tables.toml")
    presets = data["settings"]
    documents = list(data["documents"])
    for part in sorted((CORPORA / "tables").glob("*.toml")):  # more documents, a file each
        documents += _data(f"tables/{part.name}").get("documents", [])
    pages = []
    for document in documents:
        for entry in document["pages"]:
            tables = tuple(
                TableSpec(
                    _box(table["region"]), _settings(table["settings"], presets, "tables.toml")
                )
                for table in entry.get("tables", ())
            )
            pages.append(
                StructurePage(
                    f"{document['id']}-p{entry['page']}",
                    document["source"],
                    entry["page"],
                    (*document["kinds"], *entry["kinds"]),
                    entry["what"],
                    held_out=True,
                    damage=Damage(**entry["damage"]),
                    tables=tables,
                    split=document["split"],
                )
            )
    return tuple(pages)


@cache
def table_cases() -> tuple[TableCase, ...]:
    cases = []
    for case in _data("table_cells.toml")["tables"]:
        damage = _damage(case.pop("damage", None))
        cases.append(TableCase(**{**case, "region": _box(case["region"])}, damage=damage))
    return tuple(cases)
