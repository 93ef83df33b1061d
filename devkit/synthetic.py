"""Generated pages of known text, for tests, benchmarks and local demos (no fixtures on disk).

Text is drawn with the font bundled in Pillow, so the pages look the same on every machine.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from typing import Any, Final

from PIL import Image

from idp.document.sample_page import render_text_page

# Ordinary business-document prose with digits and punctuation; not tuned to any model.
SAMPLE_SENTENCES: Final = (
    "Invoice 2041 was issued on 12 March 2026 to Northwind Traders.",
    "Payment is due within 30 days of the invoice date.",
    "Please quote the order number on every remittance advice.",
    "The warehouse in Leeds shipped 48 cartons by road freight.",
    "Total amount payable: 1,284.50 EUR including VAT at 20%.",
    "Our support team answers questions from Monday to Friday.",
    "Meeting notes: budget review moved to the third quarter.",
    "The contract renews automatically unless cancelled in writing.",
    "Samples were stored at 4 degrees and analysed within 24 hours.",
    "Section 7 describes the acceptance tests for the new system.",
    "Delivery address: 221 Baker Street, London NW1 6XE.",
    "Account manager: Maria Lopez, phone +44 20 7946 0958.",
    "Quarterly revenue grew by 12 percent compared with last year.",
    "All figures are unaudited and subject to final adjustment.",
    "The board approved the proposal with seven votes in favour.",
    "Item 3 of the agenda covers the safety inspection report.",
    "Reference ABX-7731 refers to the original purchase request.",
    "Customers may return goods within 14 days of receipt.",
    "The printer on floor two needs a new toner cartridge.",
    "Travel expenses must be submitted before the end of June.",
    "Temperature readings were logged every 15 minutes overnight.",
    "Our new office opens on 1 September at 9:00 in the morning.",
    "The library holds 3,200 volumes on engineering and design.",
    "Attach the signed form and a copy of your identity card.",
    "Version 4.2 fixes the rounding error in the tax calculation.",
    "Shipping weight 12.5 kg, dimensions 60 x 40 x 35 cm.",
    "The committee will publish its findings in a short report.",
    "Keep this receipt as proof of purchase for the warranty.",
    "Call the service desk if the password reset link expires.",
    "Thank you for your order and we look forward to serving you.",
    "Rainfall in April was twice the long term monthly average.",
    "Parking permits are issued by the facilities department.",
)

BENCHMARK_PAGE_SIZE: Final = (1700, 2200)


def sample_lines(count: int, *, offset: int = 0) -> list[str]:
    """`count` known lines, starting at `offset` in the sample text (wrapping around)."""
    n = len(SAMPLE_SENTENCES)
    return [SAMPLE_SENTENCES[(offset + i) % n] for i in range(count)]


def render_page(
    lines: Sequence[str],
    *,
    size: tuple[int, int] = BENCHMARK_PAGE_SIZE,
    font_size: int = 34,
    margin: int = 100,
    line_spacing: float = 1.9,
) -> Image.Image:
    """Black text on a white RGB page, one sentence per line from the top-left margin."""
    return render_text_page(
        lines, size=size, font_size=font_size, margin=margin, line_spacing=line_spacing
    )


def numbered_pages(
    count: int, *, lines_per_page: int = 3, size: tuple[int, int] = (1300, 260)
) -> Iterator[tuple[Image.Image, str]]:
    """`count` pages, each headed by its own number so every page's text differs: (image, text).

    Generated one at a time, so a long document never holds more than one page image.
    """
    for number in range(1, count + 1):
        lines = [f"Page {number} of {count}", *sample_lines(lines_per_page - 1, offset=number)]
        yield render_page(lines, size=size, font_size=30, margin=30), "\n".join(lines)


def long_pdf(count: int, **page_options: Any) -> tuple[bytes, list[str]]:
    """A `count`-page image PDF of `numbered_pages`, and each page's text."""
    import pypdfium2  # type: ignore[import-untyped]

    texts: list[str] = []
    document = pypdfium2.PdfDocument.new()
    try:
        for image, text in numbered_pages(count, **page_options):
            page = document.new_page(image.width, image.height)
            bitmap = pypdfium2.PdfImage.new(document)
            bitmap.set_bitmap(pypdfium2.PdfBitmap.from_pil(image))
            bitmap.set_matrix(pypdfium2.PdfMatrix().scale(image.width, image.height))
            page.insert_obj(bitmap)
            page.gen_content()
            page.close()
            texts.append(text)
        buffer = io.BytesIO()
        document.save(buffer)
    finally:
        document.close()
    return buffer.getvalue(), texts


def encode(image: Image.Image, fmt: str, **params: object) -> bytes:
    """The image saved in a Pillow format ("PNG", "JPEG", "WEBP", "TIFF", "BMP", "PDF")."""
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **params)
    return buffer.getvalue()


def encode_pages(images: Sequence[Image.Image], fmt: str, **params: object) -> bytes:
    """Several pages as one multi-page file (Pillow's PDF and TIFF writers)."""
    buffer = io.BytesIO()
    # Copies: Pillow keeps per-image encoder state from earlier saves (e.g. PDF → TIFF fails).
    first, *rest = (image.copy() for image in images)
    first.save(buffer, format=fmt, save_all=True, append_images=rest, **params)
    return buffer.getvalue()


# -- inputs that must fail, each in its own way (documents tests, reliability tests, demos) ------
def pdf_pages(images: Sequence[Image.Image], *, resolution: float = 72.0) -> bytes:
    """A PDF with one image page per image (Pillow's writer; 72 dpi keeps pixel = point)."""
    return encode_pages(images, "PDF", resolution=resolution)


def text_pdf(
    pages: Sequence[Sequence[str]],
    *,
    page_size_pt: tuple[float, float] = (500, 120),
    font_size: float = 13,
    margin: float = 15,
    line_spacing: float = 1.9,
) -> bytes:
    """A born-digital PDF: each page's lines as vector text in the standard Helvetica font."""
    width, height = page_size_pt
    step = font_size * line_spacing
    page_count = len(pages)
    font_ref = 3 + 2 * page_count
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        (
            "<< /Type /Pages /Kids ["
            + " ".join(f"{3 + 2 * i} 0 R" for i in range(page_count))
            + f"] /Count {page_count} >>"
        ).encode(),
    ]
    for index, lines in enumerate(pages):
        content = bytearray()
        for row, line in enumerate(lines):
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            baseline = height - margin - font_size - row * step
            content += (
                f"BT /F1 {font_size:g} Tf {margin:g} {baseline:g} Td ({escaped}) Tj ET\n".encode(
                    "latin-1"
                )
            )
        objects.append(
            (
                f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width:g} {height:g}] "
                f"/Resources << /Font << /F1 {font_ref} 0 R >> >> /Contents {4 + 2 * index} 0 R >>"
            ).encode()
        )
        objects.append(
            f"<< /Length {len(content)} >>\nstream\n".encode() + bytes(content) + b"endstream"
        )
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return _assemble_pdf(objects, trailer_extra=b"")


def truncated(data: bytes, fraction: float = 0.5) -> bytes:
    """The first `fraction` of a file, as an interrupted upload leaves it."""
    return data[: max(1, int(len(data) * fraction))]


def empty_pdf() -> bytes:
    """A well-formed PDF whose page tree holds no pages."""
    return _assemble_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [] /Count 0 >>",
        ],
        trailer_extra=b"",
    )


def encrypted_pdf() -> bytes:
    """A one-page PDF protected by a user password (standard security handler, RC4 40-bit).

    /O and /U are random, so no empty or guessed password opens it, like any real
    password-protected file.
    """
    import hashlib

    seed = hashlib.sha256(b"idp encrypted sample").digest()
    owner = (seed + seed)[:32].hex().encode()
    user = hashlib.sha256(seed).digest().hex().encode()
    doc_id = seed[:16].hex().encode()
    return _assemble_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
            b"<< /Filter /Standard /V 1 /R 2 /O <" + owner + b"> /U <" + user + b"> /P -44 >>",
        ],
        trailer_extra=b" /Encrypt 4 0 R /ID [<" + doc_id + b"> <" + doc_id + b">]",
    )


def oversized_page_pdf(width_pt: float = 14400, height_pt: float = 14400) -> bytes:
    """A blank page of the largest size PDF allows (200 × 200 inches): huge once rasterized."""
    box = f"[0 0 {width_pt:g} {height_pt:g}]".encode()
    return _assemble_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox " + box + b" >>",
        ],
        trailer_extra=b"",
    )


def bomb_png(width: int = 20000, height: int = 20000) -> bytes:
    """A valid 1-bit PNG of width × height white pixels: tens of KB that decode to gigapixels."""
    import struct
    import zlib

    def chunk(kind: bytes, payload: bytes) -> bytes:
        crc = zlib.crc32(kind + payload) & 0xFFFFFFFF
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)  # 1-bit greyscale
    row = b"\x00" + b"\xff" * ((width + 7) // 8)
    compressor = zlib.compressobj(6)
    rows_per_chunk = 1000
    block = row * rows_per_chunk
    parts = [compressor.compress(block) for _ in range(height // rows_per_chunk)]
    parts.append(compressor.compress(row * (height % rows_per_chunk)))
    body = b"".join(parts) + compressor.flush()
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")
    )


def text_file() -> bytes:
    """Plain text, as when a .txt is renamed .png or .pdf."""
    return b"Quarterly report\nThis is plain text, not an image or a PDF.\n"


def html_file() -> bytes:
    return b"<!DOCTYPE html>\n<html><head><title>Report</title></head><body>Hi</body></html>\n"


def gif_image() -> bytes:
    return encode(Image.new("RGB", (40, 20), "white"), "GIF")


def zip_archive() -> bytes:
    """A ZIP archive of files that make no Office document (what a user may name .docx)."""
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.txt", "minutes of the meeting")
        archive.writestr("photos/readme.md", "# photos")
    return buffer.getvalue()


def _assemble_pdf(objects: Sequence[bytes], *, trailer_extra: bytes) -> bytes:
    """Serialize numbered objects with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref_at = len(out)
    out += f"xref\n0 {len(objects) + 1}\n".encode() + b"0000000000 65535 f \n"
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R".encode()
        + trailer_extra
        + f" >>\nstartxref\n{xref_at}\n%%EOF\n".encode()
    )
    return bytes(out)
