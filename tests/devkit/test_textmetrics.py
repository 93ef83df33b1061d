"""Edit distance and CER, the measure every OCR test and benchmark scores text with."""

from __future__ import annotations

import pytest

from devkit.textmetrics import character_error_rate, edit_distance


@pytest.mark.parametrize(
    ("reference", "hypothesis", "distance"),
    [
        ("kitten", "sitting", 3),
        ("", "", 0),
        ("abc", "", 3),
        ("", "abc", 3),
        ("Invoice 2026", "Invoice 2026", 0),
        ("naïve café", "naive cafe", 2),
    ],
)
def test_edit_distance_counts_insertions_deletions_and_substitutions(
    reference: str, hypothesis: str, distance: int
) -> None:
    # GIVEN two strings WHEN their distance is taken THEN each edit costs one, either way round
    assert edit_distance(reference, hypothesis) == distance
    assert edit_distance(hypothesis, reference) == distance


def test_cer_ignores_line_breaks_and_spacing_and_scales_by_the_reference() -> None:
    # GIVEN OCR output that differs from the reference in whitespace and one character
    reference = "Total due\n1,234.50 EUR"
    read = "Total  due 1,234.5O EUR"
    # WHEN scored THEN whitespace runs are not errors, the one substitution is
    assert character_error_rate(reference, read) == pytest.approx(1 / len("Total due 1,234.50 EUR"))
    assert character_error_rate("", "") == 0.0
    assert character_error_rate("", "noise") == 1.0


def test_edit_distance_of_a_hundred_page_document_is_computed_at_once() -> None:
    # GIVEN two 150,000-character texts that differ every 1,000 characters
    reference = "".join(chr(97 + i % 26) for i in range(150_000))
    hypothesis = "".join("#" if i % 1000 == 0 else c for i, c in enumerate(reference))
    # WHEN compared THEN the distance is exact (a quadratic pure-Python loop would take hours)
    assert edit_distance(reference, hypothesis) == 150
