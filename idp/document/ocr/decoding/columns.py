"""Where CTC emits a line's characters on its grid of output columns: the emitted columns, the
whitespace-separated tokens, and each line's pitch."""

from __future__ import annotations

import numpy as np

from idp.document.ocr.decoding.characters import BLANK, Floats, Int


def emitted_columns(best: Int) -> tuple[Int, Int]:
    """`best` flattened, and the flat indices of the columns where CTC emits a character (the
    first of a run of one class, not blank)."""
    classes = best.ravel()
    first = np.ones(best.shape, dtype=bool)
    first[:, 1:] = best[:, 1:] != best[:, :-1]
    return classes, np.flatnonzero(first.ravel() & (classes != BLANK))


def token_columns(best_line: Int, space: int) -> list[Int]:
    """The columns where each whitespace-separated token of one decoded line emits its
    characters (the first column of each run of one class, blank and space left out)."""
    first = np.ones(best_line.shape, dtype=bool)
    first[1:] = best_line[1:] != best_line[:-1]
    emitted = np.flatnonzero(first & (best_line != BLANK))
    is_space = best_line[emitted] == space
    token = np.cumsum(is_space)[~is_space]  # per character: the spaces before it
    characters = emitted[~is_space]
    cuts = np.flatnonzero(np.diff(token)) + 1
    return [part for part in np.split(characters, cuts) if part.size]


def line_pitch(lines: Int, distances: Int) -> Floats:
    """Per line: the median distance between neighbouring characters (0 with fewer than 2)."""
    count = int(lines.max()) + 1 if lines.size else 0
    pitch = np.zeros(count, dtype=np.float64)
    order = np.argsort(lines, kind="stable")
    lines, distances = lines[order], distances[order]
    cuts = np.flatnonzero(np.diff(lines)) + 1
    for group, values in zip(np.split(lines, cuts), np.split(distances, cuts), strict=True):
        if values.size >= 2:
            pitch[group[0]] = float(np.median(values))
    return pitch


def gap_pitch(line: Int, pitch: Floats) -> Floats:
    """Per gap, its line's pitch (0 on a line without one)."""
    per_gap = np.zeros(line.size, dtype=np.float64)
    known = line < pitch.size
    per_gap[known] = pitch[line[known]]
    return per_gap


def space_columns(classes: Int, starts: Int, ends: Int, space: int) -> Int:
    """The space columns among each run of columns from `starts` up to `ends`."""
    if not starts.size:
        return np.empty(0, dtype=np.intp)
    columns: Int = np.concatenate([np.arange(a, b) for a, b in zip(starts, ends, strict=True)])
    written: Int = columns[classes[columns] == space]
    return written
