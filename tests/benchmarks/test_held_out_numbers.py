"""The held-out numbers benchmark's choice of pages and its account of the verdicts
(benchmarks/held_out_numbers.py); the benchmark itself is run by hand, never here."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # the benchmark scripts import their siblings by name
held_out_numbers: Any = importlib.import_module("held_out_numbers")
real_corpus: Any = importlib.import_module("real_corpus")
structure_corpus: Any = importlib.import_module("structure_corpus")


def test_no_page_the_number_rules_were_set_on_is_read() -> None:
    # GIVEN the real-document corpus, where the number rules and thresholds were looked at
    tuned = {page.id for page in real_corpus.PAGES}

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


def test_the_pages_never_looked_at_are_left_out_of_a_tuning_run_and_reported_apart() -> None:
    # GIVEN the seventeen fresh sets, each chosen blind by a numeric-token rule
    sets = (
        held_out_numbers.SEVENTEENTH_FRESH_PAGES,
        held_out_numbers.SIXTEENTH_FRESH_PAGES,
        held_out_numbers.FIFTEENTH_FRESH_PAGES,
        held_out_numbers.FOURTEENTH_FRESH_PAGES,
        held_out_numbers.THIRTEENTH_FRESH_PAGES,
        held_out_numbers.TWELFTH_FRESH_PAGES,
        held_out_numbers.ELEVENTH_FRESH_PAGES,
        held_out_numbers.TENTH_FRESH_PAGES,
        held_out_numbers.NINTH_FRESH_PAGES,
        held_out_numbers.EIGHTH_FRESH_PAGES,
        held_out_numbers.SEVENTH_FRESH_PAGES,
        held_out_numbers.SIXTH_FRESH_PAGES,
        held_out_numbers.FIFTH_FRESH_PAGES,
        held_out_numbers.FOURTH_FRESH_PAGES,
        held_out_numbers.THIRD_FRESH_PAGES,
        held_out_numbers.FRESH_PAGES,
        held_out_numbers.FIRST_FRESH_PAGES,
    )
    seventeenth, sixteenth, fifteenth, fourteenth, thirteenth, twelfth, eleventh = sets[:7]
    tenth, ninth, eighth, seventh, sixth, fifth, fourth, third, second = sets[7:16]

    # THEN no page is in two sets, and only the last chosen counts as never looked at
    pages = [page for chosen in sets for page in chosen]
    ids = [page.id for page in pages]
    assert len(ids) == len(set(ids)) == 181
    groups = held_out_numbers.groups_of
    assert {g for page in seventeenth for g in groups(page)} == {
        "never looked at",
        "never looked at: a report and a catalogue",
    }
    assert all(groups(page)[0] == "never looked at" for page in seventeenth)
    assert {g for page in sixteenth for g in groups(page)} == {
        "sixteenth fresh set",
        "sixteenth fresh set: a report and a catalogue",
    }
    assert {g for page in fifteenth for g in groups(page)} == {
        "fifteenth fresh set",
        "fifteenth fresh set: invoices",
        "fifteenth fresh set: a report and a catalogue",
    }
    assert {g for page in fourteenth for g in groups(page)} == {
        "fourteenth fresh set",
        "fourteenth fresh set: invoices",
        "fourteenth fresh set: tax forms and tables",
        "fourteenth fresh set: a report and a catalogue",
    }
    assert {g for page in thirteenth for g in groups(page)} == {
        "thirteenth fresh set",
        "thirteenth fresh set: invoices",
        "thirteenth fresh set: tax forms and tables",
        "thirteenth fresh set: a report and a catalogue",
        "thirteenth fresh set: a government form",
    }
    assert {g for page in twelfth for g in groups(page)} == {
        "twelfth fresh set",
        "twelfth fresh set: invoices",
        "twelfth fresh set: a government form",
    }
    assert {g for page in eleventh for g in groups(page)} == {
        "eleventh fresh set",
        "eleventh fresh set: tax forms and tables",
        "eleventh fresh set: a report and a catalogue",
    }
    assert {g for page in tenth for g in groups(page)} == {
        "tenth fresh set",
        "tenth fresh set: invoices",
        "tenth fresh set: tax forms and tables",
        "tenth fresh set: a report and a catalogue",
    }
    assert {g for page in ninth for g in groups(page)} == {"ninth fresh set"}
    assert {g for page in eighth for g in groups(page)} == {"eighth fresh set"}
    assert {g for page in seventh for g in groups(page)} == {"seventh fresh set"}
    assert {g for page in sixth for g in groups(page)} == {"sixth fresh set"}
    assert {g for page in fifth for g in groups(page)} == {"fifth fresh set"}
    assert {g for page in fourth for g in groups(page)} == {"fourth fresh set"}
    assert {g for page in third for g in groups(page)} == {"third fresh set"}
    assert {g for page in second for g in groups(page)} == {"second fresh set"}


def test_the_documents_people_drop_are_new_to_every_corpus_and_pinned_with_their_licence() -> None:
    # GIVEN the tenth set (invoices, tax forms and tables, a report, a catalogue), the
    # eleventh (more pages of its longer documents), and the twelfth to the seventeenth
    # (documents new again)
    tenth = held_out_numbers.TENTH_FRESH_PAGES
    eleventh = held_out_numbers.ELEVENTH_FRESH_PAGES
    twelfth = held_out_numbers.TWELFTH_FRESH_PAGES
    thirteenth = held_out_numbers.THIRTEENTH_FRESH_PAGES
    fourteenth = held_out_numbers.FOURTEENTH_FRESH_PAGES
    fifteenth = held_out_numbers.FIFTEENTH_FRESH_PAGES
    sixteenth = held_out_numbers.SIXTEENTH_FRESH_PAGES
    seventeenth = held_out_numbers.SEVENTEENTH_FRESH_PAGES
    newer = (*tenth, *eleventh, *twelfth, *thirteenth, *fourteenth, *fifteenth, *sixteenth)
    newer = (*newer, *seventeenth)
    earlier = {page.source for page in held_out_numbers.numeric_pages() if page not in newer}
    earlier |= {page.source for page in real_corpus.PAGES}

    # THEN none of their documents was in an earlier set or either corpus (by its bytes' sha256:
    # one file may stand under two names), and each is pinned by its member's sha256 inside a
    # pinned archive, with a licence recorded for both
    def documents(keys: set[str]) -> set[str]:
        return {structure_corpus.SOURCES[key].sha256 for key in keys}

    sources = {page.source for page in tenth}
    assert len(sources) == 12
    assert {page.source for page in eleventh} < sources
    newer_sources = {page.source for page in twelfth}
    thirteenth_sources = {page.source for page in thirteenth}
    fourteenth_sources = {page.source for page in fourteenth}
    fifteenth_sources = {page.source for page in fifteenth}
    sixteenth_sources = {page.source for page in sixteenth}
    newest = {page.source for page in seventeenth}
    counts = (len(thirteenth_sources), len(fourteenth_sources), len(fifteenth_sources))
    assert (len(newer_sources), *counts, len(sixteenth_sources), len(newest)) == (3, 4, 6, 5, 4, 4)
    assert not documents(sources) & documents(earlier)
    assert not documents(newer_sources) & documents(earlier | sources)
    assert not documents(thirteenth_sources) & documents(earlier | sources | newer_sources)
    before = earlier | sources | newer_sources | thirteenth_sources
    assert not documents(fourteenth_sources) & documents(before)
    assert not documents(fifteenth_sources) & documents(before | fourteenth_sources)
    before |= fourteenth_sources | fifteenth_sources
    assert not documents(sixteenth_sources) & documents(before)
    before |= sixteenth_sources
    assert not documents(newest) & documents(before)
    assert len(documents(fourteenth_sources)) == 6
    assert len(documents(fifteenth_sources)) == 5
    assert len(documents(sixteenth_sources)) == len(documents(newest)) == 4
    for key in sources | before | newest:
        source = structure_corpus.SOURCES[key]
        archive = structure_corpus.ARCHIVES[source.archive]
        assert len(source.sha256) == len(archive.sha256) == 64
        assert source.licence
        assert archive.licence
