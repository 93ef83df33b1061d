"""The CER helper used by the OCR tests and the benchmark."""

from __future__ import annotations

from devkit.textmetrics import character_error_rate, edit_distance


def test_edit_distance_counts_insertions_deletions_and_substitutions() -> None:
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3
    assert edit_distance("same", "same") == 0


def test_cer_ignores_line_breaks_and_repeated_spaces() -> None:
    assert character_error_rate("a b\nc", "a  b c") == 0.0
    assert character_error_rate("abcd", "abce") == 0.25
    assert character_error_rate("", "") == 0.0
