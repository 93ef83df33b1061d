"""Parts of a text line's quad: where a word lies along it."""

from __future__ import annotations

import math

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
