"""Regenerate the sample documents shipped in samples/ (run from the repo root).

.venv/bin/python samples/generate.py
"""

from __future__ import annotations

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


if __name__ == "__main__":
    main()
