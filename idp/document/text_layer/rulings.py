"""A born-digital page's ruling lines: the straight horizontal and vertical strokes its vector
paths draw (a table's rules and cell borders), in the rendered page's pixels; and where it draws
anything else (a chart's curves and slanted lines).

PDFium (pypdfium2) lists the page's path objects, those inside form XObjects too. A path's
straight axis-aligned segments are rulings where it is stroked; where it is only filled, a thin
rectangle is one ruling along its length (LaTeX draws its rules so) and a wider one gives its
four edges (a shaded cell bounds its row). Curves, and paths neither stroked nor filled (clips),
draw no ruling.
"""

from __future__ import annotations

import ctypes
import itertools
from dataclasses import dataclass
from typing import Any, Final

from idp.document.text_layer.extract import PageToPixels

# A filled rectangle this thin (points) is a rule drawn as a box, not a shaded area.
THIN_PT: Final = 2.0
# A segment shorter than this (points) is a tick or a glyph's stroke, not a rule.
MIN_LENGTH_PT: Final = 3.0
# Segments this close (points) to one line are one ruling.
STRAIGHT_PT: Final = 0.5


@dataclass(frozen=True)
class Ruling:
    """A horizontal (y fixed, from x0 to x1) or vertical (x fixed, from y0 to y1) line, pixels."""

    horizontal: bool
    at: float  # y of a horizontal ruling, x of a vertical one
    start: float  # x0 or y0
    end: float  # x1 or y1

    @property
    def length(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Vectors:
    """A page's vector drawing: its rulings, and the boxes of the paths that are no rulings (a
    curve, a slanted line: a chart's or a diagram's), in pixels."""

    rulings: list[Ruling]
    drawings: list[tuple[float, float, float, float]]


Point = tuple[float, float]
Matrix = tuple[float, float, float, float, float, float]
_IDENTITY: Final[Matrix] = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def extract_rulings(page: Any, *, scale: float) -> list[Ruling]:
    """The rulings of a pypdfium2 PdfPage, at `scale` pixels per point."""
    return extract_vectors(page, scale=scale).rulings


def extract_vectors(page: Any, *, scale: float) -> Vectors:
    """The rulings and the other drawings of a pypdfium2 PdfPage, at `scale` pixels per point."""
    import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

    from idp.document.text_layer.extract import rendered_size

    width, height = rendered_size(page, scale)
    to_pixels = PageToPixels(page.raw, width, height)
    vectors = Vectors(rulings=[], drawings=[])
    _walk(pdfium_c, page.raw, _IDENTITY, vectors, to_pixels, scale, form=None)
    return vectors


def _walk(
    pdfium_c: Any,
    page: Any,
    outer: Matrix,
    vectors: Vectors,
    to_pixels: PageToPixels,
    scale: float,
    *,
    form: Any,
) -> None:
    count = (
        pdfium_c.FPDFFormObj_CountObjects(form) if form else pdfium_c.FPDFPage_CountObjects(page)
    )
    for index in range(count):
        obj = (
            pdfium_c.FPDFFormObj_GetObject(form, index)
            if form
            else pdfium_c.FPDFPage_GetObject(page, index)
        )
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind == pdfium_c.FPDF_PAGEOBJ_FORM:
            _walk(
                pdfium_c,
                page,
                _times(_matrix(pdfium_c, obj), outer),
                vectors,
                to_pixels,
                scale,
                form=obj,
            )
        elif kind == pdfium_c.FPDF_PAGEOBJ_PATH:
            matrix = _times(_matrix(pdfium_c, obj), outer)
            straight, drawn = _path_rulings(pdfium_c, obj, matrix)
            for a, b in straight:
                ruling = _ruling(to_pixels.point(*a), to_pixels.point(*b), scale)
                if ruling is not None:
                    vectors.rulings.append(ruling)
            for points in drawn:
                pixels = [to_pixels.point(*point) for point in points]
                xs, ys = [x for x, _ in pixels], [y for _, y in pixels]
                vectors.drawings.append((min(xs), min(ys), max(xs), max(ys)))


def _matrix(pdfium_c: Any, obj: Any) -> Matrix:
    matrix = pdfium_c.FS_MATRIX()
    if not pdfium_c.FPDFPageObj_GetMatrix(obj, ctypes.byref(matrix)):
        return _IDENTITY
    return (matrix.a, matrix.b, matrix.c, matrix.d, matrix.e, matrix.f)


def _times(inner: Matrix, outer: Matrix) -> Matrix:
    """`inner` then `outer`, as PDF concatenates a form's matrix onto the page's."""
    a, b, c, d, e, f = inner
    p, q, r, s, t, u = outer
    return (
        a * p + b * r,
        a * q + b * s,
        c * p + d * r,
        c * q + d * s,
        e * p + f * r + t,
        e * q + f * s + u,
    )


def _apply(matrix: Matrix, point: Point) -> Point:
    a, b, c, d, e, f = matrix
    x, y = point
    return (a * x + c * y + e, b * x + d * y + f)


def _path_rulings(
    pdfium_c: Any, obj: Any, matrix: Matrix
) -> tuple[list[tuple[Point, Point]], list[list[Point]]]:
    """The straight segments of a path that draw a ruling, and the points of its subpaths that
    draw something else (a curve, a slanted line), in page space (module docstring)."""
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    if not pdfium_c.FPDFPath_GetDrawMode(obj, ctypes.byref(fill), ctypes.byref(stroke)):
        return [], []
    stroked = bool(stroke.value)
    if not stroked and fill.value == pdfium_c.FPDF_FILLMODE_NONE:
        return [], []
    found: list[tuple[Point, Point]] = []
    drawn: list[list[Point]] = []
    for subpath, curved in _subpaths(pdfium_c, obj, matrix):
        segments = _segments(subpath)
        slanted = any(not _axis_aligned(a, b) for a, b in segments)
        if curved or slanted:
            if subpath:
                drawn.append(subpath)
            continue
        if stroked:
            found += [(a, b) for a, b in segments if _straight(a, b)]
        else:
            found += _filled_rulings(subpath)
    return found, drawn


def _subpaths(pdfium_c: Any, obj: Any, matrix: Matrix) -> list[tuple[list[Point], bool]]:
    """Each subpath's points in page space (closed ones ending where they began), and whether
    it holds a curve."""
    subpaths: list[tuple[list[Point], bool]] = []
    x, y = ctypes.c_float(), ctypes.c_float()
    for index in range(pdfium_c.FPDFPath_CountSegments(obj)):
        segment = pdfium_c.FPDFPath_GetPathSegment(obj, index)
        kind = pdfium_c.FPDFPathSegment_GetType(segment)
        pdfium_c.FPDFPathSegment_GetPoint(segment, ctypes.byref(x), ctypes.byref(y))
        point = _apply(matrix, (x.value, y.value))
        if kind == pdfium_c.FPDF_SEGMENT_MOVETO or not subpaths:
            subpaths.append(([point], False))
        else:
            points, _ = subpaths[-1]
            points.append(point)
            if kind != pdfium_c.FPDF_SEGMENT_LINETO:
                subpaths[-1] = (points, True)
        if pdfium_c.FPDFPathSegment_GetClose(segment):
            points = subpaths[-1][0]
            points.append(points[0])
    return subpaths


def _segments(points: list[Point]) -> list[tuple[Point, Point]]:
    if not points:
        return []
    return list(itertools.pairwise(points))


def _straight(a: Point, b: Point) -> bool:
    horizontal = abs(a[1] - b[1]) <= STRAIGHT_PT and abs(a[0] - b[0]) >= MIN_LENGTH_PT
    vertical = abs(a[0] - b[0]) <= STRAIGHT_PT and abs(a[1] - b[1]) >= MIN_LENGTH_PT
    return horizontal or vertical


def _filled_rulings(points: list[Point]) -> list[tuple[Point, Point]]:
    """A filled axis-aligned rectangle: one ruling along a thin one, its four edges otherwise."""
    corners = [p for i, p in enumerate(points) if i == 0 or not _same(p, points[i - 1])]
    if len(corners) > 1 and _same(corners[0], corners[-1]):
        corners.pop()  # closed where it began
    if len(corners) != 4 or not all(
        _axis_aligned(a, b) for a, b in zip(corners, [*corners[1:], corners[0]], strict=True)
    ):
        return []
    xs = [x for x, _ in corners]
    ys = [y for _, y in corners]
    left, right, bottom, top = min(xs), max(xs), min(ys), max(ys)
    if top - bottom <= THIN_PT and right - left >= MIN_LENGTH_PT:
        middle = (top + bottom) / 2
        return [((left, middle), (right, middle))]
    if right - left <= THIN_PT and top - bottom >= MIN_LENGTH_PT:
        middle = (left + right) / 2
        return [((middle, bottom), (middle, top))]
    if right - left < MIN_LENGTH_PT or top - bottom < MIN_LENGTH_PT:
        return []
    return [
        ((left, bottom), (right, bottom)),
        ((left, top), (right, top)),
        ((left, bottom), (left, top)),
        ((right, bottom), (right, top)),
    ]


def _same(a: Point, b: Point) -> bool:
    return abs(a[0] - b[0]) <= STRAIGHT_PT / 10 and abs(a[1] - b[1]) <= STRAIGHT_PT / 10


def _axis_aligned(a: Point, b: Point) -> bool:
    return abs(a[0] - b[0]) <= STRAIGHT_PT or abs(a[1] - b[1]) <= STRAIGHT_PT


def _ruling(a: Point, b: Point, scale: float) -> Ruling | None:
    """The segment a→b (pixels) as a ruling, or None where it is no longer straight (a page
    turned by a non-right angle)."""
    tolerance = STRAIGHT_PT * scale + 1.0
    if abs(a[1] - b[1]) <= tolerance:
        return Ruling(True, (a[1] + b[1]) / 2, min(a[0], b[0]), max(a[0], b[0]))
    if abs(a[0] - b[0]) <= tolerance:
        return Ruling(False, (a[0] + b[0]) / 2, min(a[1], b[1]), max(a[1], b[1]))
    return None
