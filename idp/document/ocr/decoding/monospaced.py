"""Lines set in a monospaced font, told by the grid of cells their characters stand on: there a
word space fills a cell of its own."""

from __future__ import annotations

import numpy as np

from idp.document.ocr.decoding.characters import Flags, Floats, Int
from idp.document.ocr.decoding.thresholds import (
    MONOSPACED_CELL_COLUMNS,
    MONOSPACED_CHARACTERS,
    MONOSPACED_FIT,
)


def monospaced_cells(classes: Int, emitted: Int, width: int, space: int) -> Floats:
    """Per line: the width in columns of its character cell where the line is set in a
    monospaced font, 0 where it is not or its columns cannot tell. The characters of a
    monospaced line stand on a grid: each a whole number of cells from the first, one cell
    from its neighbour, two across a word space. The grid is fitted to the columns where
    a line of MONOSPACED_CHARACTERS or more emits its characters, with at least one space
    the model wrote (the characters around it two cells apart at least), and the line is
    monospaced where its cell is MONOSPACED_CELL_COLUMNS wide and every character stands
    within MONOSPACED_FIT of the grid. `emitted` are flat indices into `classes`, lines
    `width` columns wide; `space` is the space class."""
    line = emitted // width
    cells = np.zeros(int(line.max()) + 1 if line.size else 0, dtype=np.float64)
    written = classes[emitted] == space
    cuts = np.flatnonzero(np.diff(line)) + 1
    for columns, spaces in zip(np.split(emitted, cuts), np.split(written, cuts), strict=True):
        if columns.size:
            cells[columns[0] // width] = monospaced_cell(columns, spaces)
    return cells


def monospaced_cell(columns: Int, spaces: Flags) -> float:
    """The cell width of one line's grid (see `monospaced_cells`), 0 where the line does not
    fit one; `columns` are where it emits its characters, `spaces` which are spaces."""
    characters = columns[~spaces]
    if characters.size < MONOSPACED_CHARACTERS:
        return 0.0
    distance = np.diff(characters)
    spaced = np.diff(np.cumsum(spaces)[~spaces]) > 0  # a written space between two characters
    if not spaced.any() or np.count_nonzero(~spaced) < 2:
        return 0.0
    cell = float(np.median(distance[~spaced]))
    least, most = MONOSPACED_CELL_COLUMNS
    if not least <= cell <= most:
        return 0.0
    for _ in range(2):  # the pitch's cell, then the fitted one
        steps = np.maximum(np.rint(distance / cell), np.where(spaced, 2.0, 1.0))
        index = np.concatenate(([0.0], np.cumsum(steps)))
        cell, offset = np.polyfit(index, characters.astype(np.float64), 1)
    off_grid = np.abs(characters - (offset + cell * index)).max()
    return float(cell) if least <= cell <= most and off_grid <= MONOSPACED_FIT * cell else 0.0
