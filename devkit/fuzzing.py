"""The fuzzer's documents: hypothesis strategies over devkit.hostile's generators.

Each example is (a call that makes the file, written out as code, and the call itself), so a
finding is reproduced by pasting its name into devkit.hostile.CORPUS. Shapes lean to the edges:
sides of 1, 2, 7, 8 and 9 px, the detector's and the classifier's input sizes, aspect ratios to
30,000:1; every mode a file can store; dpi and EXIF orientation values valid or not; TIFFs of
many frames; PDF page boxes zero, negative, inverted and huge, odd /Rotate, CropBox and UserUnit;
Flate and image bombs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from hypothesis import strategies as st

from devkit import hostile

Document = tuple[str, Callable[[], bytes]]

_EDGE_SIDES = (1, 2, 3, 7, 8, 9, 16, 31, 32, 33, 224, 256, 1280, 1281, 4000)
_PIXELS = 6_000_000  # generated images stay this small: shape is the point, not size
_LONG_SIDES = (2_000, 20_000, 60_000)


def _call(function: Callable[..., bytes], *args: Any, **kwargs: Any) -> Document:
    shown = [repr(arg) for arg in args] + [f"{key}={value!r}" for key, value in kwargs.items()]
    return f"{function.__name__}({', '.join(shown)})", partial(function, *args, **kwargs)


@st.composite
def rasters(draw: st.DrawFn) -> Document:
    fmt = draw(st.sampled_from(hostile.RASTER_FORMATS))
    mode = draw(st.sampled_from([mode for mode, fmts in hostile.MODES.items() if fmt in fmts]))
    side = st.one_of(st.sampled_from(_EDGE_SIDES), st.integers(1, 3000))
    if draw(st.booleans()):  # a strip: one side long, the other short
        long, short = draw(st.sampled_from(_LONG_SIDES)), draw(st.integers(1, 40))
        width, height = (long, short) if draw(st.booleans()) else (short, long)
    else:
        width, height = draw(side), draw(side)
    if width * height > _PIXELS:
        height = max(1, _PIXELS // width)
    if fmt == "WEBP":
        width, height = min(width, 16383), min(height, 16383)
    options: dict[str, Any] = {
        "ink": draw(st.sampled_from(["blank", "text", "noise"])),
        "dpi": draw(st.sampled_from([None, 0.001, 1.0, 72.0, 300.0, 1e6])),
        "exif_orientation": draw(st.sampled_from([None, 0, 1, 3, 5, 6, 7, 8, 9, 65535])),
        "seed": draw(st.integers(0, 3)),
    }
    if fmt == "TIFF":
        options["frames"] = draw(st.sampled_from([1, 2, 40]))
    return _call(hostile.raster, fmt, mode, width, height, **options)


_COORDINATES = st.one_of(
    st.sampled_from([0.0, 0.5, 1.0, 612.0, 792.0, -612.0, 14400.0, -14400.0, 1e-4]),
    st.floats(-20000, 20000, allow_nan=False),
)


@st.composite
def pdfs(draw: st.DrawFn) -> Document:
    kind = draw(st.sampled_from(["boxes", "boxes", "boxes", "flate", "image", "jbig2"]))
    if kind == "flate":
        return _call(hostile.flate_bomb_pdf, draw(st.integers(1, 64)))
    if kind in ("image", "jbig2"):
        width = draw(st.sampled_from([1, 8, 1000, 30000, 2_000_000]))
        height = draw(st.sampled_from([1, 8, 1000, 30000, 2_000_000]))
        if kind == "image":
            width, height = min(width, 30000), min(height, 30000)
        return _call(hostile.image_bomb_pdf, width, height, jbig2=kind == "jbig2")
    box = tuple(draw(_COORDINATES) for _ in range(4))
    options: dict[str, Any] = {
        "rotate": draw(st.sampled_from([0, 90, 180, 270, 45, -90, 450, 3600])),
        "pages": draw(st.integers(1, 3)),
        "text": draw(st.booleans()),
    }
    if draw(st.booleans()):
        options["crop"] = tuple(draw(_COORDINATES) for _ in range(4))
    if draw(st.booleans()):
        options["user_unit"] = draw(st.sampled_from([0.001, 0.5, 2.0, 75000.0]))
    return _call(hostile.pdf, box, **options)


def documents() -> st.SearchStrategy[Document]:
    """A hostile image or PDF (module docstring)."""
    return st.one_of(rasters(), pdfs())
