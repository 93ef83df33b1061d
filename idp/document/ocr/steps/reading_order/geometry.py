"""The lines of a page as reading order sees them: upright, deskewed, axis-aligned boxes, the
calibrated thresholds, and the small helpers every step shares."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class LayoutThresholds:
    """The calibrated constants (docs/thresholds.md#reading-order). Lengths are in median line
    heights (`_h`), so they scale with the rendering resolution; only the 2 px floor of a gutter
    is absolute."""

    gutter_h: float = 0.1  # the narrowest gutter
    band_shrink: float = 0.2  # boxes shrink by this share of their height when cut into bands
    big_gap_h: float = 3.0  # a vertical gap this tall ends a run of columns
    margin_frac: float = 0.12  # header / footer zone: this share of the page at top / bottom
    hf_gap_h: float = 1.5  # ... set apart from the body by this much
    max_candidates: int = 12  # vertical cuts tried per node
    noise_gap_h: float = 1.0  # a line merged across the gutter lies this close to its neighbours
    noise_run: int = 3  # ... and at most this many follow each other
    gutter_tol: float = 0.03  # a run's other gutters may be crossed by this share of its lines
    prose_chars: float = 22.0  # running text: median characters per line ...
    long_chars: float = 30.0  # ... or this share (and at least 3) of lines this long,
    long_frac: float = 0.25
    prose_fill: float = 0.75  # ... lines filling this share of the column ...
    prose_gap_h: float = 0.8  # ... and following each other at most this far apart
    align_tol: float = 0.2  # on the same row: centres within this share of the line height
    misalign_tol: float = 0.3  # clearly off a row beyond it
    align_frac: float = 0.7  # table rows: this share of lines has a partner across the gutter
    align_min_frac: float = 0.25  # ... judged on the sparse side when the full side has this
    step_heading_ratio: float = 1.15  # a line this much taller beside two rows: out of step
    skew_frac: float = 0.3  # this share of lines in zig-zag chains across: independent sides
    para_gap_h: float = 0.6  # paragraph break: a gap over the median gap plus this ...
    para_gap_ratio: float = 1.8  # ... and over this times the median gap
    heading_ratio: float = 1.3  # line height ratio of a heading or a new block
    max_deskew_deg: float = 10.0  # larger angles are a rotation, not skew


DEFAULT_THRESHOLDS: Final = LayoutThresholds()


@dataclass
class Page:
    """The lines' upright, deskewed axis-aligned boxes, as arrays for the vectorised steps and
    as lists for the per-line loops (indexing numpy scalars one by one is slow)."""

    x0: Floats
    y0: Floats
    x1: Floats
    y1: Floats
    yc: Floats
    h: Floats
    nchars: Floats
    tiny: npt.NDArray[np.bool_]  # a bullet or a bar: never blocks a gutter
    h_med: float  # the page's median line height
    gutter: float  # the narrowest gutter, in pixels
    t: LayoutThresholds
    texts: list[str]
    X0: list[float] = field(init=False)
    X1: list[float] = field(init=False)
    Y0: list[float] = field(init=False)
    Y1: list[float] = field(init=False)
    YS0: list[float] = field(init=False)  # shrunk, for cutting bands
    YS1: list[float] = field(init=False)
    YC: list[float] = field(init=False)
    H: list[float] = field(init=False)
    NC: list[float] = field(init=False)
    TINY: list[bool] = field(init=False)
    ALPHA: list[bool] = field(init=False)  # has letters
    WRAP: list[bool] = field(init=False)  # words that may continue on the next line of a cell
    blocks: list[tuple[str, list[int]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        shrink = self.t.band_shrink * np.minimum(self.y1 - self.y0, 2 * self.h_med)
        ys0 = self.y0 + shrink
        self.X0, self.X1 = self.x0.tolist(), self.x1.tolist()
        self.Y0, self.Y1 = self.y0.tolist(), self.y1.tolist()
        self.YS0, self.YS1 = ys0.tolist(), np.maximum(self.y1 - shrink, ys0).tolist()
        self.YC, self.H = self.yc.tolist(), self.h.tolist()
        self.NC, self.TINY = self.nchars.tolist(), self.tiny.tolist()
        self.ALPHA = [any(ch.isalpha() for ch in text) for text in self.texts]
        self.WRAP = [a and len(t.split()) >= 2 for a, t in zip(self.ALPHA, self.texts, strict=True)]

    def top(self, idx: Sequence[int]) -> float:
        return min(self.Y0[i] for i in idx)

    def bottom(self, idx: Sequence[int]) -> float:
        return max(self.Y1[i] for i in idx)


def _skew(quads: Floats, heights: Floats) -> float:
    """The median angle (radians) of the top and bottom edges of lines over 3 heights long."""
    top = quads[:, 1] - quads[:, 0]
    bottom = quads[:, 2] - quads[:, 3]
    keep = np.hypot(top[:, 0], top[:, 1]) > 3 * np.maximum(heights, 1.0)
    if not keep.any():
        return 0.0
    angles = np.concatenate(
        [np.arctan2(top[keep, 1], top[keep, 0]), np.arctan2(bottom[keep, 1], bottom[keep, 0])]
    )
    return float(np.median(angles))


def upright_geometry(
    quads: Floats, texts: list[str], size: tuple[int, int], thresholds: LayoutThresholds
) -> Page:
    height_along = (
        np.hypot(*(quads[:, 3] - quads[:, 0]).T) + np.hypot(*(quads[:, 2] - quads[:, 1]).T)
    ) / 2
    angle = _skew(quads, height_along)
    # Columns and rows are found on axis-aligned boxes, which a skewed page makes overlap.
    if 0.0005 < abs(angle) < math.radians(thresholds.max_deskew_deg):
        c, s = math.cos(-angle), math.sin(-angle)
        cx, cy = size[0] / 2, size[1] / 2
        x, y = quads[..., 0] - cx, quads[..., 1] - cy
        quads = np.stack([cx + c * x - s * y, cy + s * x + c * y], axis=-1)
    x0, y0 = quads[..., 0].min(axis=1), quads[..., 1].min(axis=1)
    x1, y1 = quads[..., 0].max(axis=1), quads[..., 1].max(axis=1)
    h = y1 - y0
    nchars = np.array([max(len(text.strip()), 1) for text in texts], dtype=np.float64)
    flat = ~((h > 1.5 * (x1 - x0)) & (nchars >= 2))
    h_med = max(float(np.median(h[flat] if flat.any() else h)), 1.0)
    return Page(
        x0=x0,
        y0=y0,
        x1=x1,
        y1=y1,
        yc=(y0 + y1) / 2,
        h=np.maximum(h, 1.0),
        nchars=nchars,
        tiny=((x1 - x0) < h_med) & (nchars <= 2),
        h_med=h_med,
        gutter=max(thresholds.gutter_h * h_med, 2.0),
        t=thresholds,
        texts=texts,
    )


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return float(ordered[n // 2]) if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def union(pairs: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[list[float]] = []
    for start, end in sorted(pairs):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end) for start, end in merged]


def gaps_of(pg: Page, idx: Sequence[int], lo: float, hi: float) -> list[tuple[float, float]]:
    """The horizontal gaps, at least a gutter wide, between these lines inside [lo, hi]."""
    core = [i for i in idx if not pg.TINY[i]]
    if not core:
        return [(lo, hi)]
    gaps = []
    cursor = lo
    for start, end in union([(pg.X0[i], pg.X1[i]) for i in core]):
        if start > cursor:
            gaps.append((cursor, start))
        cursor = max(cursor, end)
    if hi > cursor:
        gaps.append((cursor, hi))
    return [(a, b) for a, b in gaps if b - a >= pg.gutter]


def bands_of(pg: Page, idx: Sequence[int]) -> list[list[int]]:
    """The lines cut into horizontal bands at every vertical gap."""
    bands: list[list[int]] = []
    end = -math.inf
    for i in sorted(idx, key=lambda i: (pg.YS0[i], pg.X0[i])):
        if bands and pg.YS0[i] <= end:
            bands[-1].append(i)
            end = max(end, pg.YS1[i])
        else:
            bands.append([i])
            end = pg.YS1[i]
    return bands


def rows_of(pg: Page, idx: Sequence[int]) -> list[list[int]]:
    """Lines whose centres lie within half a line height, each row left to right."""
    rows: list[list[int]] = []
    row_yc = row_h = 0.0
    for i in sorted(idx, key=lambda i: (pg.YC[i], pg.X0[i])):
        if rows and abs(pg.YC[i] - row_yc) <= 0.5 * min(pg.H[i], row_h):
            rows[-1].append(i)
        else:
            rows.append([i])
            row_yc, row_h = pg.YC[i], pg.H[i]
    return [sorted(row, key=lambda i: pg.X0[i]) for row in rows]


@dataclass
class Group:
    """A run of bands that a vertical cut separates: its lines and all its gutters."""

    lines: list[int]
    gutters: list[tuple[float, float]]
    loose: set[int] = field(default_factory=set)  # lines merged across the gutter
