"""Regenerate the sample documents shipped in samples/ (run from the repo root).

.venv/bin/python samples/generate.py
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from devkit.synthetic import encode_pages, render_page, sample_lines

HERE = Path(__file__).parent
LINES_PER_PAGE = 12
PAGE_SIZE = (1275, 1650)  # US Letter at 150 dpi
PDF_RESOLUTION = 150.0


def main() -> None:
    pages = [sample_lines(LINES_PER_PAGE, offset=i * LINES_PER_PAGE) for i in range(2)]
    images = [render_page(lines, size=PAGE_SIZE, font_size=34, margin=90) for lines in pages]
    pdf = encode_pages(images, "PDF", resolution=PDF_RESOLUTION)
    (HERE / "sample-letter.pdf").write_bytes(pdf)
    (HERE / "sample-letter.txt").write_text("\n\n".join("\n".join(lines) for lines in pages) + "\n")
    print(f"wrote {HERE / 'sample-letter.pdf'} ({len(pdf)} bytes, {len(pages)} pages)")
    write_docx(pages, HERE / "sample-letter.docx")


def write_docx(pages: list[list[str]], path: Path) -> None:
    """The same letter as a Word document (Calibri, a page break between its two pages): what
    `make demo` converts beside the scanned PDF."""
    import docx
    from docx.enum.text import WD_BREAK

    document = docx.Document()
    document.styles["Normal"].font.name = "Calibri"
    for number, lines in enumerate(pages):
        if number:
            document.paragraphs[-1].add_run().add_break(WD_BREAK.PAGE)
        for line in lines:
            document.add_paragraph(line)
    # Fixed metadata, so that the file is the same every time it is made.
    properties = document.core_properties
    properties.author = "paddle-idp"
    properties.created = properties.modified = properties.last_printed = datetime(2026, 1, 1)
    properties.revision = 1
    document.save(str(path))
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
