"""Parts of a text line's quad: where a word lies along it."""

from __future__ import annotations

import math
from collections.abc import Sequence

from idp.contract.results import Point, Quad

# A line this many times longer down than across reads top to bottom (PaddleX's own test).
VERTICAL_RATIO = 1.5


def is_vertical(quad: Quad) -> bool:
    """Does the line read down its quad (box[0] → box[3]) rather than across (box[0] → box[1])?
    Measured along the quad's own edges, so a line of a page read turned, whose box[0] → box[1]
    runs up or down the page, still reads across."""
    across = math.dist(quad[0], quad[1])
    down = math.dist(quad[0], quad[3])
    return across > 0 and down / across > VERTICAL_RATIO


def quad_span(quad: Quad, t0: float, t1: float, *, vertical: bool) -> Quad:
    """The part of a line's quad from t0 to t1 (shares, 0 to 1) of the way along its reading
    direction (left to right; top to bottom for vertical text), clockwise from its top-left."""

    def at(a: Point, b: Point, t: float) -> Point:
        return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)

    top_left, top_right, bottom_right, bottom_left = quad
    if vertical:
        return (
            at(top_left, bottom_left, t0),
            at(top_right, bottom_right, t0),
            at(top_right, bottom_right, t1),
            at(top_left, bottom_left, t1),
        )
    return (
        at(top_left, top_right, t0),
        at(top_left, top_right, t1),
        at(bottom_left, bottom_right, t1),
        at(bottom_left, bottom_right, t0),
    )


# Axis-aligned views of a quad: where layout regions, table cells and lines meet.
Bounds = tuple[float, float, float, float]  # x0, y0, x1, y1


def bounds(quad: Quad) -> Bounds:
    xs, ys = [x for x, _ in quad], [y for _, y in quad]
    return min(xs), min(ys), max(xs), max(ys)


def centre(quad: Quad) -> Point:
    return sum(x for x, _ in quad) / 4, sum(y for _, y in quad) / 4


def contains(quad: Quad, point: Point) -> bool:
    x0, y0, x1, y1 = bounds(quad)
    return x0 <= point[0] <= x1 and y0 <= point[1] <= y1


def area(box: Bounds) -> float:
    x0, y0, x1, y1 = box
    return max(x1 - x0, 0.0) * max(y1 - y0, 0.0)


def overlap(a: Bounds, b: Bounds) -> float:
    """The area two axis-aligned boxes share."""
    return area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def hull(quads: Sequence[Quad]) -> Quad:
    """The axis-aligned box around the quads (a zero box where there are none)."""
    if not quads:
        return ((0.0, 0.0), (0.0, 0.0), (0.0, 0.0), (0.0, 0.0))
    boxes = [bounds(quad) for quad in quads]
    x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
    x1, y1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
