"""Documents of hostile shape, generated (never vendored): what a careless or malicious uploader
sends to make a worker run out of memory or time.

`raster` and `pdf` build one file from a few parameters (the fuzzer in tests/system/fuzz draws
them). CORPUS names the cases every run must survive: the shapes the pipeline was once found to
crash on, and the kinds a reviewer listed. Each entry is a generator call, so the corpus is
code: a crash the fuzzer finds is added here as the parameters that made it.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Callable, Sequence
from typing import Final, Literal

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from devkit.receipts import receipt
from devkit.synthetic import _assemble_pdf, bomb_png

Ink = Literal["blank", "text", "noise"]
RASTER_FORMATS: Final = ("PNG", "JPEG", "TIFF", "BMP", "WEBP")
# Pillow modes a file may store, and the formats that can store them.
MODES: Final[dict[str, tuple[str, ...]]] = {
    "1": ("PNG", "TIFF", "BMP"),
    "L": RASTER_FORMATS,
    "LA": ("PNG", "TIFF", "WEBP"),
    "P": ("PNG", "TIFF", "BMP"),
    "PA": ("PNG",),  # palette with a transparent entry
    "RGB": RASTER_FORMATS,
    "RGBA": ("PNG", "TIFF", "WEBP"),
    "I;16": ("PNG", "TIFF"),
    "CMYK": ("JPEG", "TIFF"),
}
_EXIF_ORIENTATION: Final = 0x0112
_WEBP_MAX: Final = 16383  # WEBP cannot store a side longer than this
_TEXT: Final = "Invoice 2041 total 1,284.50 EUR"


def raster(
    fmt: str,
    mode: str,
    width: int,
    height: int,
    *,
    ink: Ink = "text",
    dpi: float | None = None,
    exif_orientation: int | None = None,
    frames: int = 1,
    seed: int = 0,
) -> bytes:
    """An image file of `width`×`height` pixels in `mode`, blank, with a line of text, or noise;
    with the dpi and EXIF orientation it declares (any values, valid or not) and, for TIFF,
    `frames` pages."""
    page = _pixels(width, height, ink, seed)
    image = _in_mode(page, mode)
    params: dict[str, object] = {}
    if dpi is not None:
        params["dpi"] = (dpi, dpi)
    if exif_orientation is not None and fmt in ("JPEG", "PNG", "TIFF", "WEBP", "HEIF", "AVIF"):
        exif = Image.Exif()
        exif[_EXIF_ORIENTATION] = exif_orientation
        params["exif"] = exif.tobytes()
    if fmt == "JPEG":
        params["quality"] = 80
    buffer = io.BytesIO()
    if fmt == "HEIF":  # a phone's photo: pillow-heif's x265 encoder (tests and benchmarks only)
        import pillow_heif

        pillow_heif.from_pillow(image.convert("RGB")).save(buffer, quality=80, **params)
    elif fmt == "TIFF" and frames > 1:
        image.save(buffer, "TIFF", save_all=True, append_images=[image] * (frames - 1), **params)
    else:
        image.save(buffer, fmt, **params)
    return buffer.getvalue()


def _pixels(width: int, height: int, ink: Ink, seed: int) -> Image.Image:
    if ink == "noise":
        values = np.random.default_rng(seed).integers(0, 256, (height, width), dtype=np.uint8)
        return Image.fromarray(values).convert("RGB")
    image = Image.new("RGB", (width, height), "white")
    if ink == "text" and width >= 8 and height >= 8:
        size = max(6, min(28, height - 4))
        font = ImageFont.load_default(size=size)
        ImageDraw.Draw(image).text(
            (2, 1), "Invoice 2041 total 1,284.50 EUR", fill="black", font=font
        )
    return image


def _in_mode(image: Image.Image, mode: str) -> Image.Image:
    if mode == "PA":
        paletted = image.convert("P")
        paletted.info["transparency"] = 0
        return paletted
    if mode == "I;16":
        grey = np.asarray(image.convert("L"), dtype=np.uint16) * 257
        return Image.fromarray(grey)  # uint16: mode I;16
    return image.convert(mode)


def pdf(
    box: Sequence[float] = (0, 0, 612, 792),
    *,
    rotate: int = 0,
    pages: int = 1,
    crop: Sequence[float] | None = None,
    user_unit: float | None = None,
    text: bool = True,
) -> bytes:
    """A PDF of `pages` pages with this MediaBox (any numbers: zero, negative, inverted, huge),
    /Rotate, CropBox and UserUnit, each with a line of text."""
    content = b"BT /F1 18 Tf 36 700 Td (Invoice 2041 total 1,284.50 EUR) Tj ET" if text else b""
    stream = b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"
    extra = b""
    if crop is not None:
        extra += b" /CropBox " + _array(crop)
    if user_unit is not None:
        extra += b" /UserUnit %g" % user_unit
    page_objects = []
    kids = []
    first_page = 5
    for index in range(pages):
        kids.append(b"%d 0 R" % (first_page + index))
        page_objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox "
            + _array(box)
            + b" /Rotate %d" % rotate
            + b" /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R"
            + extra
            + b" >>"
        )
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + b" ".join(kids) + b"] /Count %d >>" % pages,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        stream,
        *page_objects,
    ]
    return _assemble_pdf(objects, trailer_extra=b"")


def flate_bomb_pdf(inflated_mb: int) -> bytes:
    """A one-page PDF whose content stream is a few hundred KB of Flate that inflates to
    `inflated_mb` MB (spaces: valid content that draws nothing)."""
    compressor = zlib.compressobj(9)
    block = b" " * (1 << 20)
    body = b"".join(compressor.compress(block) for _ in range(inflated_mb)) + compressor.flush()
    stream = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(body) + body + b"\nendstream"
    return _assemble_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
            stream,
        ],
        trailer_extra=b"",
    )


def image_bomb_pdf(width: int, height: int, *, jbig2: bool = False) -> bytes:
    """A letter page drawing one image XObject that declares `width`×`height` pixels: 1-bit
    Flate data that inflates to all of them, or a JBIG2 stream (a generic region segment that
    declares that size, with almost no data)."""
    if jbig2:
        # JBIG2 embedded stream: a page-information segment then an immediate generic region.
        page_info = struct.pack(">IBBBI", 0, 48, 0, 1, 19) + struct.pack(
            ">IIIIBH", width, height, 0, 0, 0, 0
        )
        region = struct.pack(">IBBBI", 1, 38, 0, 1, 0xFFFFFFFF) + struct.pack(
            ">IIIIBB", width, height, 0, 0, 0, 0
        )
        data, filters = page_info + region + b"\x00" * 64, b"/JBIG2Decode"
    else:
        compressor = zlib.compressobj(9)
        row = b"\x00" * ((width + 7) // 8)
        data = b"".join(compressor.compress(row * 64) for _ in range(height // 64))
        data += compressor.flush()
        filters = b"/FlateDecode"
    image = (
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray"
        b" /BitsPerComponent 1 /Filter %s /Length %d >>\nstream\n"
        % (width, height, filters, len(data))
        + data
        + b"\nendstream"
    )
    draw = b"q 612 0 0 792 0 0 cm /Im1 Do Q"
    return _assemble_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]"
            b" /Resources << /XObject << /Im1 4 0 R >> >> /Contents 5 0 R >>",
            image,
            b"<< /Length %d >>\nstream\n" % len(draw) + draw + b"\nendstream",
        ],
        trailer_extra=b"",
    )


def _array(numbers: Sequence[float]) -> bytes:
    return b"[" + b" ".join(b"%g" % number for number in numbers) + b"]"


def encode_png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


# The regression corpus: name → the file. Every run must end each of them COMPLETED or FAILED
# with a specific code, within the memory ceiling (tests/system/fuzz, benchmarks/hostile.py).
CORPUS: Final[dict[str, Callable[[], bytes]]] = {
    # The 203-byte PNG whose page classifier input would have been 7.7 M × 256 px (5.9 GB).
    "png-60000x2": lambda: raster("PNG", "L", 60000, 2, ink="blank"),
    "png-2x60000": lambda: raster("PNG", "L", 2, 60000, ink="blank"),
    "png-20000x8-text": lambda: raster("PNG", "L", 20000, 8, ink="text"),
    "png-800x8-text": lambda: raster("PNG", "L", 800, 8, ink="text"),
    "png-8x800": lambda: raster("PNG", "RGB", 8, 800, ink="noise"),
    # The fuzzer's find (seed 2003): taller than 2.5 widths, shorter than a detector tile.
    "png-8x96-1bit": lambda: raster("PNG", "1", 8, 96, ink="blank"),
    "png-1x1": lambda: raster("PNG", "RGB", 1, 1, ink="blank"),
    "bmp-1x1-1bit": lambda: raster("BMP", "1", 1, 1, ink="blank"),
    "png-16bit": lambda: raster("PNG", "I;16", 640, 120),
    "png-palette-alpha": lambda: raster("PNG", "PA", 640, 120),
    "tiff-16bit": lambda: raster("TIFF", "I;16", 640, 120),
    "jpeg-cmyk-exif-8": lambda: raster("JPEG", "CMYK", 640, 120, exif_orientation=8),
    "jpeg-exif-orientation-9": lambda: raster("JPEG", "RGB", 640, 120, exif_orientation=9),
    "jpeg-exif-orientation-0": lambda: raster("JPEG", "RGB", 640, 120, exif_orientation=0),
    "png-dpi-1": lambda: raster("PNG", "RGB", 640, 120, dpi=1),
    "png-dpi-huge": lambda: raster("PNG", "RGB", 640, 120, dpi=1e6),
    "jpeg-dpi-0": lambda: raster("JPEG", "RGB", 640, 120, dpi=0.001),
    "webp-16383x8": lambda: raster("WEBP", "RGB", _WEBP_MAX, 8, ink="noise"),
    # A phone's 48-MP photo (8064 × 6048), stored sideways with the turn to undo: read, not
    # refused (peak RSS in docs/robustness.md).
    "heic-48mp-photo": lambda: raster("HEIF", "RGB", 8064, 6048, exif_orientation=6),
    "avif-exif-6": lambda: raster("AVIF", "RGB", 1200, 160, exif_orientation=6),
    "tiff-1500-frames": lambda: raster("TIFF", "1", 64, 64, ink="blank", frames=1500),
    "png-bomb-30000x30000": lambda: bomb_png(30000, 30000),
    "png-bomb-9000x9000": lambda: bomb_png(9000, 9000),
    "receipt-576x9976": lambda: encode_png(receipt(7, 283).image),
    "pdf-zero-box": lambda: pdf((0, 0, 0, 0)),
    "pdf-negative-box": lambda: pdf((0, 0, -612, -792)),
    "pdf-inverted-box": lambda: pdf((612, 792, 0, 0)),
    "pdf-near-zero-box": lambda: pdf((0, 0, 0.5, 0.5)),
    "pdf-thin-box": lambda: pdf((0, 0, 14400, 2)),
    "pdf-huge-box": lambda: pdf((0, 0, 14400, 14400)),
    "pdf-rotate-45": lambda: pdf(rotate=45),
    "pdf-rotate-450": lambda: pdf(rotate=450),
    "pdf-rotate-negative": lambda: pdf(rotate=-90),
    "pdf-user-unit-75000": lambda: pdf((0, 0, 612, 792), user_unit=75000),
    "pdf-crop-outside": lambda: pdf(crop=(10000, 10000, 10001, 10001)),
    "pdf-flate-bomb-200mb": lambda: flate_bomb_pdf(200),
    "pdf-image-bomb-40000x40000": lambda: image_bomb_pdf(40000, 40000),
    "pdf-jbig2-bomb": lambda: image_bomb_pdf(2_000_000, 2_000_000, jbig2=True),
}
