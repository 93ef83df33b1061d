"""The table corpus's data (benchmarks/corpora/tables.toml and tables/*.toml): every page
pinned and licensed, its split by document, none from the packages and files the held-out
pages come from. Reads the TOML files only: nothing is fetched or rendered here."""

from __future__ import annotations

import tomllib
from collections import Counter, defaultdict
from pathlib import PurePosixPath
from typing import Any

from benchmarks.corpora import CORPORA, archives, sources, structure_pages, table_pages

# The held-out pages come from these: no page of the table corpus may.
EXCLUDED_PACKAGES = {
    "texlive-publishers-doc",
    "texlive-latex-recommended-doc",
    "texlive-science-doc",
    "r-cran-psych",
    "r-cran-survival",
}
EXCLUDED_FILES = {
    ("pdfminer.six", "naacl06-shinyama.pdf"),
    ("pdfminer.six", "i1040nr.pdf"),
    ("pypdf", "example.pdf"),
    ("pypdf", "GeoBase_NHNC1_Data_Model_UML_EN.pdf"),
}
# The kinds of table people drop; each split must hold several of them.
TABLE_KINDS = {
    "financial",
    "invoice",
    "price-list",
    "timetable",
    "statistics",
    "scientific",
    "form-grid",
    "catalogue",
}
MIN_PAGES = 150
MIN_DOCUMENTS = 40
MAX_PAGES_PER_DOCUMENT = 8


def _documents() -> list[dict[str, Any]]:
    """The documents of tables.toml and of every file under tables/."""
    files = [CORPORA / "tables.toml", *sorted((CORPORA / "tables").glob("*.toml"))]
    documents: list[dict[str, Any]] = []
    for path in files:
        documents += tomllib.loads(path.read_text(encoding="utf-8")).get("documents", [])
    return documents


def _publication(document: dict[str, Any]) -> str:
    """A report cut into several files is one document."""
    return str(document.get("report", document["source"]))


def _is_sha256(value: str) -> bool:
    return len(value) == 64 and all(char in "0123456789abcdef" for char in value)


def test_every_page_comes_from_a_pinned_and_licensed_document() -> None:
    # GIVEN the table corpus's pages
    pages = table_pages()

    # WHEN each is traced to its document and the package that holds it
    pinned = [
        (sources()[page.source], archives()[sources()[page.source].archive]) for page in pages
    ]

    # THEN both are pinned by sha256 and carry a licence
    assert pages
    for source, archive in pinned:
        assert _is_sha256(source.sha256)
        assert _is_sha256(archive.sha256)
        assert source.licence.strip()
        assert archive.licence.strip()
        assert archive.version
        assert archive.file


def test_page_ids_are_unique_and_none_is_a_structure_page() -> None:
    # GIVEN the table corpus and the structure corpus, whose scans share one cache
    ids = [page.id for page in table_pages()]

    # WHEN their ids are compared THEN no id is given twice
    assert len(ids) == len(set(ids))
    assert not set(ids) & {page.id for page in structure_pages()}


def test_every_document_is_in_one_split_only() -> None:
    # GIVEN the documents of the corpus, a report cut into several files counted as one
    splits: dict[str, set[str]] = defaultdict(set)
    for document in _documents():
        splits[document["source"]].add(document["split"])
        splits[_publication(document)].add(document["split"])

    # WHEN the pages are read THEN each split is "dev" or "test" and no document is in both
    assert {page.split for page in table_pages()} == {"dev", "test"}
    assert all(len(split) == 1 for split in splits.values()), splits


def test_no_page_comes_from_the_held_out_pages_packages_or_files() -> None:
    # GIVEN the packages and files the held-out pages come from, and their pinned checksums
    held_out = {
        source.sha256
        for source in sources().values()
        if (archives()[source.archive].name, PurePosixPath(source.member).name) in EXCLUDED_FILES
    }

    # WHEN each page's document is traced to its package and member
    for page in table_pages():
        source = sources()[page.source]
        package = archives()[source.archive].name

        # THEN it is none of them, under any name
        assert package not in EXCLUDED_PACKAGES, page.id
        assert (package, PurePosixPath(source.member).name) not in EXCLUDED_FILES, page.id
        assert PurePosixPath(source.member).name not in {name for _, name in EXCLUDED_FILES}
        assert source.sha256 not in held_out, page.id


def test_damage_is_varied_within_a_flatbed_scans_range() -> None:
    # GIVEN the pages' damage
    damages = [page.damage for page in table_pages()]

    # WHEN checked THEN each is a plausible scan, and no two pages share a seed
    for damage in damages:
        assert 150 <= damage.dpi <= 300
        assert abs(damage.angle) <= 0.5
        assert 0.5 <= damage.blur <= 1.0
        assert 4 <= damage.noise <= 12
        assert 55 <= damage.jpeg_quality <= 85
    assert len({damage.seed for damage in damages}) == len(damages)
    assert len({damage.dpi for damage in damages}) >= 3


def test_every_page_holds_tables_and_a_kind_of_table() -> None:
    # GIVEN the pages WHEN their tables and kinds are read THEN each has both
    for page in table_pages():
        assert page.tables, page.id
        assert TABLE_KINDS & set(page.kinds), page.id
        assert page.held_out


def test_no_document_gives_more_than_eight_pages() -> None:
    # GIVEN the documents, a report cut into several files counted as one
    pages: Counter[str] = Counter()
    for document in _documents():
        pages[_publication(document)] += len(document["pages"])

    # WHEN counted THEN none gives more than its share
    assert max(pages.values()) <= MAX_PAGES_PER_DOCUMENT, pages.most_common(3)


def test_both_splits_hold_several_kinds_of_table() -> None:
    # GIVEN the pages of each split
    kinds: dict[str, set[str]] = defaultdict(set)
    for page in table_pages():
        kinds[str(page.split)] |= TABLE_KINDS & set(page.kinds)

    # WHEN their kinds are gathered THEN each split holds at least three
    assert set(kinds) == {"dev", "test"}
    assert all(len(found) >= 3 for found in kinds.values()), kinds


def test_the_corpus_is_too_big_to_memorise() -> None:
    # GIVEN the corpus WHEN its pages and documents are counted
    pages = table_pages()
    documents = {_publication(document) for document in _documents()}

    # THEN there are enough that rules cannot be fitted to them one by one
    assert len(pages) >= MIN_PAGES
    assert len(documents) >= MIN_DOCUMENTS
