"""Text accuracy metrics for OCR output: character error rate against a known reference."""

from __future__ import annotations


def normalize_text(text: str) -> str:
    """Collapse all whitespace runs to single spaces; OCR line breaks are not errors."""
    return " ".join(text.split())


def edit_distance(reference: str, hypothesis: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions all cost 1)."""
    if len(reference) < len(hypothesis):
        reference, hypothesis = hypothesis, reference
    previous = list(range(len(hypothesis) + 1))
    for i, ref_char in enumerate(reference, start=1):
        current = [i]
        for j, hyp_char in enumerate(hypothesis, start=1):
            current.append(
                min(
                    previous[j] + 1,
                    current[j - 1] + 1,
                    previous[j - 1] + (ref_char != hyp_char),
                )
            )
        previous = current
    return previous[-1]


def character_error_rate(reference: str, hypothesis: str) -> float:
    """CER = edit distance / reference length, after whitespace normalization."""
    ref = normalize_text(reference)
    hyp = normalize_text(hypothesis)
    if not ref:
        return 0.0 if not hyp else 1.0
    return edit_distance(ref, hyp) / len(ref)
