"""Text accuracy metrics for OCR output: character error rate against a known reference."""

from __future__ import annotations

from rapidfuzz.distance import Levenshtein


def normalize_text(text: str) -> str:
    """Collapse all whitespace runs to single spaces; OCR line breaks are not errors."""
    return " ".join(text.split())


def edit_distance(reference: str, hypothesis: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions all cost 1)."""
    return int(Levenshtein.distance(reference, hypothesis))


def character_error_rate(reference: str, hypothesis: str) -> float:
    """CER = edit distance / reference length, after whitespace normalization."""
    ref = normalize_text(reference)
    hyp = normalize_text(hypothesis)
    if not ref:
        return 0.0 if not hyp else 1.0
    return edit_distance(ref, hyp) / len(ref)
