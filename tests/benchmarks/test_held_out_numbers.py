"""The held-out numbers benchmark's choice of pages and its account of the verdicts
(benchmarks/held_out_numbers.py); the benchmark itself is run by hand, never here."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest

from benchmarks import held_out_numbers
from benchmarks.corpora import (
    CorpusPage,
    StructurePage,
    archives,
    number_sets,
    real_pages,
    sources,
    structure_pages,
)
from tests.paths import REPO_ROOT


def test_no_page_the_number_rules_were_set_on_is_read() -> None:
    # GIVEN the real-document corpus, where the number rules and thresholds were looked at
    tuned = {page.id for page in real_pages()}

    # WHEN the benchmark chooses its pages
    pages = held_out_numbers.numeric_pages()

    # THEN none of them is one of those, and both sets of the structure corpus are there
    assert pages
    assert not tuned.intersection(page.id for page in pages)
    assert {page.held_out for page in pages} == {True, False}


def test_the_verdicts_say_how_many_flagged_numbers_were_read_wrong() -> None:
    # GIVEN two pages, one with two numbers flagged (one of them read wrong), one with none
    rows = [
        {"id": "a", "ppocrv5": {"doubtful": ["1,284.50", "2O26"], "doubtful_wrong": 1}},
        {"id": "b", "ppocrv5": {"doubtful": [], "doubtful_wrong": 0}},
    ]

    # WHEN summarized THEN the page, the numbers and the wrong ones are counted
    assert held_out_numbers.verdicts(rows, ["ppocrv5"]) == (
        "ppocrv5: 1 of 2 pages flagged numbers_doubtful, 2 numbers flagged, 1 of them read wrong"
    )


def test_a_flagged_number_counts_as_wrong_only_when_the_truth_lacks_it() -> None:
    # GIVEN numbers flagged as the verdict lists them, with quotes and brackets around them
    flagged = ["'13',", "(1.4)", "2O26", "17/03/2026."]

    # WHEN compared with the page's truth THEN only the one read wrong counts
    assert held_out_numbers.wrong_numbers(flagged, "'13', (1.4) 2026 17/03/2026.") == 1


def test_no_page_is_in_two_sets_and_only_the_newest_set_is_still_unread() -> None:
    # GIVEN the fresh sets, oldest first, each chosen blind by a numeric-token rule
    sets = number_sets()

    # THEN no page is in two sets, each set is named once, dated in order, and only the last
    # chosen counts as never looked at
    ids = [page.id for chosen in sets for page in chosen.pages]
    assert len(ids) == len(set(ids)) >= 180
    assert len({chosen.name for chosen in sets}) == len(sets)
    assert [chosen.date for chosen in sets] == sorted(chosen.date for chosen in sets)
    assert [chosen.looked_at for chosen in sets] == [True] * (len(sets) - 1) + [False]
    assert held_out_numbers.fresh_sets() == (sets[-1],)


def test_a_page_is_reported_in_its_set_and_by_kind_of_document_where_its_set_is() -> None:
    # GIVEN a set reported by kind of document and one that is not
    by_kind = next(chosen for chosen in number_sets() if chosen.by_kind)
    plain = next(chosen for chosen in number_sets() if not chosen.by_kind)
    invoice = next(page for page in by_kind.pages if page.kinds[-1] == "invoice")

    # WHEN their pages are grouped THEN each counts in its set, and the first also in its kind
    assert held_out_numbers.groups_of(invoice) == [by_kind.name, f"{by_kind.name}: invoices"]
    assert {g for page in plain.pages for g in held_out_numbers.groups_of(page)} == {plain.name}
    # and every group a page can fall in is one the report knows, newest set first
    groups = held_out_numbers.groups()
    assert groups[0] == number_sets()[-1].name
    for page in held_out_numbers.numeric_pages():
        assert set(held_out_numbers.groups_of(page)) <= set(groups)


def test_a_set_of_new_documents_holds_none_that_an_earlier_set_or_a_corpus_holds() -> None:
    # GIVEN the corpora's documents, and the fresh sets in the order they were chosen
    def documents(pages: Iterable[StructurePage | CorpusPage]) -> set[str]:
        return {sources()[page.source].sha256 for page in pages}

    seen = documents(real_pages()) | documents(structure_pages())

    # THEN a set that says its documents are new holds none seen before (by its bytes' sha256:
    # one file may stand under two names), and every document is pinned by its member's sha256
    # inside a pinned archive, with a licence recorded for both
    for chosen in number_sets():
        if chosen.new_documents:
            assert not documents(chosen.pages) & seen, chosen.name
        seen |= documents(chosen.pages)
        for page in chosen.pages:
            source = sources()[page.source]
            archive = archives()[source.archive]
            assert len(source.sha256) == len(archive.sha256) == 64
            assert source.licence
            assert archive.licence


def test_a_sets_first_run_is_kept_in_the_history_once(tmp_path: Path) -> None:
    # GIVEN the history without the newest set, and that set's first run
    newest = number_sets()[-1]
    history = tmp_path / "fresh_sets.json"
    history.write_text(json.dumps({"about": "", "sets": []}))
    engines = {"ppocrv6": {"pages": len(newest.pages), "numeric": {}}}
    summary = {newest.name: engines, f"{newest.name}: invoices": engines, "looked at": {}}

    # WHEN it is recorded
    held_out_numbers.record_first_run(newest, summary, {"tesseract": "5"}, history)

    # THEN the history holds it with its figures per kind of document and when it was run
    (entry,) = json.loads(history.read_text())["sets"]
    assert entry["name"] == newest.name
    assert entry["first_run"]["engines"] == engines
    assert entry["first_run"]["by_kind"] == {"invoices": engines}
    assert entry["first_run"]["recorded"]["date"]
    # and a second first run of the same set is refused: its pages were seen after the first
    with pytest.raises(SystemExit, match="first run"):
        held_out_numbers.record_first_run(newest, summary, {}, history)


def test_the_history_holds_every_looked_at_sets_first_run() -> None:
    history = json.loads((REPO_ROOT / "benchmarks/results/fresh_sets.json").read_text())
    recorded = [entry["name"] for entry in history["sets"]]
    assert recorded == [chosen.name for chosen in number_sets()][: len(recorded)]
    assert {chosen.name for chosen in number_sets() if chosen.looked_at} <= set(recorded)
