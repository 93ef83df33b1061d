"""Columns or table rows: whether a gutter separates running text or the cells of a table, and a
table read row by row."""

from __future__ import annotations

import bisect
import itertools

import numpy as np
import numpy.typing as npt

from idp.document.ocr.steps.reading_order.geometry import Group, Page, median, rows_of


# -- columns or table rows -----------------------------------------------------------------------
def column_gutters(pg: Page, group: Group, columns: list[list[int]]) -> list[bool]:
    """For each gutter: True where it separates columns of text, False where it separates the
    cells of table rows."""
    sides = [[i for i in column if i not in group.loose] for column in columns]
    prose = [_is_prose(pg, side) for side in sides]
    out = []
    for k in range(len(columns) - 1):
        if prose[k] and prose[k + 1]:
            out.append(True)  # running text on both sides
            continue
        heading, skew = _out_of_step(pg, sides[k], sides[k + 1])
        if heading or skew >= pg.t.skew_frac:
            out.append(True)  # the sides run independently
        elif not prose[k] and not prose[k + 1]:
            out.append(False)  # short lines on both sides, in step: rows of a form or table
        else:
            out.append(_aligned(pg, columns[k], columns[k + 1]) < pg.t.align_frac)
    return out


def _is_prose(pg: Page, column: list[int]) -> bool | None:
    """Whether a column of 3 lines or more is running text; None when too short to tell."""
    t = pg.t
    core = [i for i in column if not pg.TINY[i]]
    if len(core) < 3:
        return None
    chars = pg.nchars[core]
    long = int((chars >= t.long_chars).sum())
    wordy = float(np.median(chars)) >= t.prose_chars or long >= max(3, t.long_frac * len(core))
    # Running text fills its column; the keys and values of a table vary in width ...
    widths = pg.x1[core] - pg.x0[core]
    span = float(np.percentile(pg.x1[core], 90) - np.percentile(pg.x0[core], 10))
    if not (wordy and float(np.median(widths)) >= t.prose_fill * span):
        return False
    # ... and is set solid, lines following each other at line spacing (form fields are not).
    ordered = sorted(core, key=lambda i: pg.YC[i])
    gaps = [pg.Y0[j] - pg.Y1[i] for i, j in itertools.pairwise(ordered)]
    return median(gaps) <= t.prose_gap_h * median([pg.H[i] for i in core])


def _aligned(pg: Page, left: list[int], right: list[int]) -> float:
    """The share of lines on either side of a gutter with a partner across it on the same row
    (the rows of a table or form)."""
    if not left or not right:
        return 0.0
    tolerance = pg.t.align_tol * np.minimum(pg.h[left][:, None], pg.h[right][None, :])
    hit = np.abs(pg.yc[left][:, None] - pg.yc[right][None, :]) <= tolerance
    # A bullet or a dash without a partner neither helps nor hurts.
    hit_a, hit_b = hit.any(axis=1), hit.any(axis=0)
    share_a = float(hit_a.sum() / max(1, (~pg.tiny[left] | hit_a).sum()))
    share_b = float(hit_b.sum() / max(1, (~pg.tiny[right] | hit_b).sum()))
    # A sparse table column (few cells filled) is judged on its own side only.
    if min(share_a, share_b) >= pg.t.align_min_frac:
        return max(share_a, share_b)
    return min(share_a, share_b)


def _out_of_step(pg: Page, left: list[int], right: list[int]) -> tuple[bool, float]:
    """(heading, skew): whether a heading-sized line on one side sits beside body lines on the
    other without lining up with any (two tables side by side that happen to share a row
    pitch, not the rows of one table); and the share of lines that overlap lines across the
    gutter without lining up with them (rows out of step)."""
    a = np.array([i for i in left if not pg.TINY[i]], dtype=int)
    b = np.array([i for i in right if not pg.TINY[i]], dtype=int)
    if len(a) == 0 or len(b) == 0:
        return False, 0.0
    t = pg.t
    ref = float(np.median(np.concatenate([pg.h[a], pg.h[b]])))
    mh = np.minimum(pg.h[a][:, None], pg.h[b][None, :])
    dy = np.abs(pg.yc[a][:, None] - pg.yc[b][None, :])
    hit = dy <= t.align_tol * mh
    overlap = np.minimum(pg.y1[a][:, None], pg.y1[b][None, :]) - np.maximum(
        pg.y0[a][:, None], pg.y0[b][None, :]
    )
    near = overlap > 0.3 * mh
    off_row = near & (dy > t.misalign_tol * mh)
    # A heading beside two rows of the other side, on neither.
    lone_a = ~hit.any(axis=1) & (off_row.sum(axis=1) >= 2) & (pg.h[a] >= t.step_heading_ratio * ref)
    lone_b = ~hit.any(axis=0) & (off_row.sum(axis=0) >= 2) & (pg.h[b] >= t.step_heading_ratio * ref)
    heading = bool(lone_a.any() or lone_b.any())
    return heading, _zigzag_share(near, off_row)


def _zigzag_share(near: npt.NDArray[np.bool_], off_row: npt.NDArray[np.bool_]) -> float:
    """The share of lines in chains of lines overlapping across the gutter with three lines or
    more on both sides (zig-zag), or in lone pairs off each other's row. The rows of a table
    pair up one to one in line, or one line to the stacked lines of a wrapped cell."""
    n_a, n_b = near.shape
    parent = list(range(n_a + n_b))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for x, y in zip(*np.nonzero(near), strict=True):
        parent[root(int(x))] = root(n_a + int(y))
    component = [root(x) for x in range(n_a + n_b)]
    size_a: dict[int, int] = {}
    size_b: dict[int, int] = {}
    for x in range(n_a):
        size_a[component[x]] = size_a.get(component[x], 0) + 1
    for y in range(n_b):
        size_b[component[n_a + y]] = size_b.get(component[n_a + y], 0) + 1
    zigzag = {c for c in size_a if size_a[c] >= 3 and size_b.get(c, 0) >= 3}
    for x in np.flatnonzero(off_row.any(axis=1)):
        c = component[x]
        if size_a[c] == 1 and size_b.get(c, 0) == 1:
            zigzag.add(c)
    return float(sum(c in zigzag for c in component) / (n_a + n_b))


def table(pg: Page, group: Group) -> None:
    """Row by row, cells left to right, a wrapped cell's lines together: one table block."""
    cuts = [(a + b) / 2 for a, b in group.gutters]
    column = {i: bisect.bisect_left(cuts, (pg.X0[i] + pg.X1[i]) / 2) for i in group.lines}
    rows = rows_of(pg, group.lines)
    tied = _tied_rows(pg, group.lines, column, rows)
    lines: list[int] = []
    k = 0
    while k < len(rows):
        end, t = tied[k], k
        while t <= end:  # a tie inside the row may reach further down
            end = max(end, tied[t])
            t += 1
        cells: dict[int, list[int]] = {}
        for row in rows[k : end + 1]:
            for i in row:
                cells.setdefault(column[i], []).append(i)
        for c in sorted(cells):
            for row in rows_of(pg, cells[c]):
                lines.extend(row)
        k = end + 1
    pg.blocks.append(("table", lines))


def _tied_rows(
    pg: Page, lines: list[int], column: dict[int, int], rows: list[list[int]]
) -> list[int]:
    """For each row, the last row read with it: a one-line cell centred beside a wrapped cell
    (two stacked lines of words in another column) ties the rows of those lines together."""
    row_of = {i: k for k, row in enumerate(rows) for i in row}
    by_y = sorted(lines, key=lambda i: pg.YC[i])
    centres = [pg.YC[i] for i in by_y]
    tied = list(range(len(rows)))
    by_column: dict[int, list[int]] = {}
    for i in by_y:
        by_column.setdefault(column[i], []).append(i)
    for c, members in by_column.items():
        for u, v in itertools.pairwise(members):
            # Words (not a number) continued right below in the same column.
            if not (pg.WRAP[u] and pg.ALPHA[v]) or pg.Y0[v] - pg.Y1[u] > 0.5 * pg.H[u]:
                continue
            mid = (pg.YC[u] + pg.YC[v]) / 2
            first = bisect.bisect_left(centres, mid - 0.5 * pg.H[u])
            last = bisect.bisect_right(centres, mid + 0.5 * pg.H[u])
            for x in by_y[first:last]:
                if column[x] != c and _centred_beside(pg, x, u, v, mid):
                    ks = sorted((row_of[u], row_of[v], row_of[x]))
                    tied[ks[0]] = max(tied[ks[0]], ks[2])
    return tied


def _centred_beside(pg: Page, x: int, u: int, v: int, mid: float) -> bool:
    """Line x sits centred between stacked lines u and v, on neither's row, overlapping both."""
    h = pg.H[x]
    tol = pg.t.misalign_tol * h
    return (
        abs(pg.YC[x] - mid) <= 0.25 * h
        and abs(pg.YC[x] - pg.YC[u]) > tol
        and abs(pg.YC[x] - pg.YC[v]) > tol
        and min(pg.Y1[u], pg.Y1[x]) - max(pg.Y0[u], pg.Y0[x]) >= 0.25 * min(pg.H[u], h)
        and min(pg.Y1[v], pg.Y1[x]) - max(pg.Y0[v], pg.Y0[x]) >= 0.25 * min(pg.H[v], h)
    )
