"""Recursive XY-cut on bands of lines: the strongest vertical cut and the run of bands it holds
for; a single column read as rows split into paragraphs."""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from idp.document.ocr.steps.reading_order.columns import column_gutters, table
from idp.document.ocr.steps.reading_order.geometry import (
    Group,
    Page,
    bands_of,
    gaps_of,
    median,
    rows_of,
)


# -- one column: rows and paragraphs -------------------------------------------------------------
def flow(pg: Page, idx: Sequence[int]) -> None:
    """A single column of lines: rows top to bottom, split into paragraphs."""
    rows = rows_of(pg, idx)
    if not rows:
        return
    t = pg.t
    lo = min(pg.X0[i] for i in idx)
    hi = max(pg.X1[i] for i in idx)
    width = max(hi - lo, 1.0)
    tops = [pg.top(row) for row in rows]
    bottoms = [pg.bottom(row) for row in rows]
    heights = [median([pg.H[i] for i in row]) for row in rows]
    lefts = [min(pg.X0[i] for i in row) for row in rows]
    rights = [max(pg.X1[i] for i in row) for row in rows]
    gaps = [tops[k] - bottoms[k - 1] for k in range(1, len(rows))]
    open_gaps = [gap for gap in gaps if gap > 0]
    med_gap = median(open_gaps) if open_gaps else 0.0
    h_loc = median(heights)
    char_w = median([(pg.X1[i] - pg.X0[i]) / max(pg.NC[i], 1) for i in idx])
    indent = max(1.5 * char_w, 0.02 * width)
    justified = len(rows) >= 3 and sum(hi - r <= 2 * char_w for r in rights) >= 0.6 * len(rows)

    def indented(k: int) -> bool:
        return lefts[k] - lo > indent

    current = list(rows[0])
    for k in range(1, len(rows)):
        ratio = max(heights[k], heights[k - 1]) / max(min(heights[k], heights[k - 1]), 1.0)
        gap = gaps[k - 1]
        new = gap > max(med_gap + t.para_gap_h * h_loc, t.para_gap_ratio * med_gap)
        new |= ratio > t.heading_ratio
        # A first-line indent: this row indented, the one before and the one after not.
        if not new and indented(k) and not indented(k - 1):
            back = k + 1 < len(rows) and not indented(k + 1)
            new = back and (rights[k - 1] < hi - 4 * char_w or justified)
        # In justified text a short line ends its paragraph.
        if not new and justified and rights[k - 1] < hi - 0.15 * width:
            new = not indented(k)
        if new:
            pg.blocks.append(("paragraph", current))
            current = []
        current.extend(rows[k])
    pg.blocks.append(("paragraph", current))


# -- recursive XY-cut on bands -------------------------------------------------------------------
@dataclass
class _Band:
    lines: list[int]
    top: float
    bottom: float
    lo: float  # the extent of its lines, bullets and bars aside (inf / -inf if it has none)
    hi: float
    empties: list[tuple[float, float]]  # its gaps at least a gutter wide


@dataclass(frozen=True)
class _Run:
    start: int  # the first and last band
    end: int
    noise: list[int]  # bands of lines merged across the gutter
    key: tuple[int, int]  # (bands with text on both sides of the cut, lines): most wins


@dataclass(frozen=True)
class _Cut:
    """How each band lies against a vertical cut x = m."""

    clear: list[bool]  # the cut crosses no line of it
    two: list[bool]  # ... and it has text on both sides
    left_only: list[bool]  # ... text on the left only


def _band_list(pg: Page, idx: Sequence[int], lo: float, hi: float) -> list[_Band]:
    out = []
    for lines in bands_of(pg, idx):
        core = [i for i in lines if not pg.TINY[i]]
        out.append(
            _Band(
                lines=lines,
                top=pg.top(lines),
                bottom=pg.bottom(lines),
                lo=min(pg.X0[i] for i in core) if core else math.inf,
                hi=max(pg.X1[i] for i in core) if core else -math.inf,
                empties=gaps_of(pg, lines, lo, hi),
            )
        )
    return out


def _candidate_cuts(pg: Page, bands: list[_Band]) -> list[float]:
    """Where to try a vertical cut: just left of text right of a gap (left-aligned columns share
    a left edge) and just right of text left of one (right-aligned columns), most common first."""
    lefts: list[float] = []
    rights: list[float] = []
    for band in bands:
        for a, b in band.empties:
            if a > band.lo and b < band.hi:  # text on both sides within the band
                rights.append(b)
                lefts.append(a)
    if not lefts:
        return []
    grid = max(2 * pg.gutter, 4.0)
    eps = 0.5 * pg.gutter
    scored: list[tuple[int, float]] = []
    for edges, side in ((np.asarray(rights), -1), (np.asarray(lefts), 1)):
        keys = np.round(edges / grid).astype(int)
        uniq, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
        for u in range(len(uniq)):
            members = edges[inverse == u]
            position = members.min() - eps if side < 0 else members.max() + eps
            scored.append((int(counts[u]), float(position)))
    scored.sort(key=lambda item: -item[0])
    positions: list[float] = []
    for _, position in scored:
        if all(abs(position - q) > 0.5 for q in positions):
            positions.append(position)
        if len(positions) >= pg.t.max_candidates:
            break
    return positions


def _best_run(pg: Page, bands: list[_Band]) -> _Run | None:
    """The run of consecutive bands that one vertical cut separates with the most bands of text
    on both sides of it: the strongest cut, as in XY-cut, but local in y."""
    thin = [len(b.lines) <= 2 and b.bottom - b.top <= 1.8 * pg.h_med for b in bands]
    best: _Run | None = None
    for m in _candidate_cuts(pg, bands):
        clear = [any(a <= m <= b for a, b in band.empties) for band in bands]
        cut = _Cut(
            clear=clear,
            two=[c and band.lo < m < band.hi for c, band in zip(clear, bands, strict=True)],
            left_only=[c and band.hi <= m for c, band in zip(clear, bands, strict=True)],
        )
        for run in _runs(pg, bands, cut, thin):
            if best is None or run.key > best.key:
                best = run
    if best is None or best.key[0] < 1:
        return None
    return best


def _runs(pg: Page, bands: list[_Band], cut: _Cut, thin: list[bool]) -> Iterator[_Run]:
    k = 0
    while k < len(bands):
        if not cut.two[k]:
            k += 1
            continue
        run = _run_from(pg, bands, cut, thin, k)
        yield run
        k = max(run.end + 1, k + 1)


def _run_from(pg: Page, bands: list[_Band], cut: _Cut, thin: list[bool], k: int) -> _Run:
    """The run grown up and down from two-sided band k."""
    big = pg.t.big_gap_h * pg.h_med
    start = k
    while start > 0 and cut.clear[start - 1] and bands[start].top - bands[start - 1].bottom <= big:
        start -= 1
    end, noise, last_two = _grow_down(pg, bands, cut, thin, k)
    # One-sided-left bands set apart below the last two-sided band (a full-width section after
    # the columns, whose short lines clear the gutter) or above the first are not columns.
    gap = _paragraph_gap(pg, bands, k, last_two)
    t = last_two + 1
    while t <= end and not (cut.left_only[t] and bands[t].top - bands[t - 1].bottom > gap):
        t += 1
    end = t - 1
    t = k - 1
    while t >= start and not (cut.left_only[t] and bands[t + 1].top - bands[t].bottom > gap):
        t -= 1
    start = t + 1
    # Thin lines crossing the cut right above, at line spacing, opening the node: lines merged
    # across the gutter at the columns' top.
    if cut.two[start]:
        near = pg.t.noise_gap_h * pg.h_med
        r = 0
        while (
            r < pg.t.noise_run
            and start - r - 1 >= 0
            and thin[start - r - 1]
            and not cut.clear[start - r - 1]
            and bands[start - r].top - bands[start - r - 1].bottom <= near
        ):
            r += 1
        if r and start - r == 0:
            noise.extend(range(start - r, start))
            start -= r
    noise = [x for x in noise if start <= x <= end]
    score = sum(cut.two[start : end + 1])
    lines = sum(len(bands[t].lines) for t in range(start, end + 1))
    return _Run(start=start, end=end, noise=noise, key=(score, lines))


def _grow_down(
    pg: Page, bands: list[_Band], cut: _Cut, thin: list[bool], k: int
) -> tuple[int, list[int], int]:
    """(last band, noise bands, last two-sided band) of the run that starts at band k."""
    big = pg.t.big_gap_h * pg.h_med
    noise: list[int] = []
    end, j, last_two = k, k, k
    while j < len(bands):
        if j > end and bands[j].top - bands[end].bottom > big:
            break
        if cut.clear[j]:
            end = j
            if cut.two[j]:
                last_two = j
            j += 1
            continue
        # Up to noise_run thin lines crossing the cut at line spacing between two-sided bands
        # (or closing the node): lines PP-OCRv5 merged across a narrow gutter.
        r = _noise_length(pg, bands, cut, thin, j, end) if cut.two[end] else 0
        if not r:
            break
        noise.extend(range(j, j + r))
        end = j + r - 1
        last_two = end if j + r == len(bands) else last_two
        j += r
    return end, noise, last_two


def _noise_length(
    pg: Page, bands: list[_Band], cut: _Cut, thin: list[bool], j: int, end: int
) -> int:
    near = pg.t.noise_gap_h * pg.h_med
    r = 0
    previous = bands[end].bottom
    while r < pg.t.noise_run and j + r < len(bands) and thin[j + r] and not cut.clear[j + r]:
        if bands[j + r].top - previous > near:
            return 0
        previous = bands[j + r].bottom
        r += 1
        if j + r == len(bands):
            return r
        if cut.clear[j + r]:
            resumes = cut.two[j + r] and bands[j + r].top - previous <= near
            return r if resumes else 0
    return 0


def _paragraph_gap(pg: Page, bands: list[_Band], a: int, b: int) -> float:
    gaps = [bands[t + 1].top - bands[t].bottom for t in range(a, b)]
    gaps = [gap for gap in gaps if gap > 0]
    med = median(gaps) if gaps else 0.3 * pg.h_med
    return max(1.5 * med, med + 0.5 * pg.h_med)


def _group_of(pg: Page, bands: list[_Band], run: _Run, lo: float, hi: float) -> Group:
    """The run's lines, with every gutter of the run: x ranges crossed by at most `gutter_tol`
    of its lines (the chosen cut is crossed by none but lines merged across it)."""
    lines = [i for band in bands[run.start : run.end + 1] for i in band.lines]
    loose = {i for t in run.noise for i in bands[t].lines}
    core = np.array([i for i in lines if i not in loose and not pg.TINY[i]], dtype=int)
    if len(core) < 2:
        return Group(lines, [], loose)
    base = math.floor(lo)
    size = math.ceil(hi) - base + 2
    coverage = np.zeros(size + 1)
    np.add.at(coverage, np.clip(np.floor(pg.x0[core]).astype(int) - base, 0, size), 1)
    np.add.at(coverage, np.clip(np.ceil(pg.x1[core]).astype(int) - base, 0, size), -1)
    free = np.cumsum(coverage)[:size] <= int(pg.t.gutter_tol * len(core))
    edges = np.flatnonzero(np.diff(np.concatenate([[0], free.astype(np.int8), [0]])))
    left_most = float(pg.x1[core].min())  # some line ends here ...
    right_most = float(pg.x0[core].max())  # ... and some line starts here
    gutters = []
    for a, b in zip(edges[::2], edges[1::2], strict=True):
        a_x, b_x = float(a + base), float(b + base)
        if b_x - a_x >= min(pg.gutter, 2.0) and left_most - 0.5 <= a_x and b_x <= right_most + 0.5:
            gutters.append((a_x, b_x))
    return Group(lines, gutters, loose)


def _columns(pg: Page, group: Group) -> list[list[int]]:
    cuts = [(a + b) / 2 for a, b in group.gutters]
    columns: list[list[int]] = [[] for _ in range(len(cuts) + 1)]
    for i in group.lines:
        if i in group.loose:  # a line merged across the gutter reads from where it starts
            x = pg.X0[i] + max(0.5 * pg.H[i], 0.15 * (pg.X1[i] - pg.X0[i]))
        else:
            x = (pg.X0[i] + pg.X1[i]) / 2
        columns[bisect.bisect_left(cuts, x)].append(i)
    return [column for column in columns if column]


def node(pg: Page, idx: list[int], depth: int = 0) -> None:
    """Recursive XY-cut: the strongest vertical cut and the run of bands it holds for; the bands
    above and below are nodes of their own."""
    if not idx:
        return
    if len(idx) == 1 or depth > 60:
        flow(pg, idx)
        return
    lo = min(pg.X0[i] for i in idx)
    hi = max(pg.X1[i] for i in idx)
    bands = _band_list(pg, idx, lo, hi)
    run = _best_run(pg, bands)
    if run is None:
        flow(pg, idx)
        return
    group = _group_of(pg, bands, run, lo, hi)
    node(pg, [i for band in bands[: run.start] for i in band.lines], depth + 1)
    columns = _columns(pg, group) if group.gutters else [group.lines]
    if len(columns) < 2:
        flow(pg, group.lines)
    else:
        is_column = column_gutters(pg, group, columns)
        if not any(is_column):
            table(pg, group)
        else:
            part = list(columns[0])
            for k, column in enumerate(columns[1:]):
                if is_column[k]:
                    node(pg, part, depth + 1)
                    part = []
                part.extend(column)
            node(pg, part, depth + 1)
    node(pg, [i for band in bands[run.end + 1 :] for i in band.lines], depth + 1)
