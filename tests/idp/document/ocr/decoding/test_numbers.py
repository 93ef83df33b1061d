"""Numbers, dates and codes read exactly, each as its own token: a report page at 150 dpi dense in
dates, amounts, identifiers and phone numbers, read by PP-OCRv5 and PP-OCRv6 through the page
path (the space-aware decoder's rule for gaps inside numbers: idp.document.ocr.decoding.numbers)."""

from __future__ import annotations

import io
import re
from collections import Counter
from itertools import pairwise

import numpy as np
import pytest
from PIL import Image, ImageFilter

from devkit.synthetic import pdf_pages, render_page
from idp.contract.jobs import JobOptions
from idp.contract.names import OcrModel
from idp.document.ocr.pipeline import ocr_document
from idp.document.ocr.registry import EngineRegistry

pytestmark = pytest.mark.ocr

# A page of a report as a user's letter-size document at 150 dpi: 12-pt type is 25 px.
REPORT_LINES = (
    "Report date 17/03/2026, next review 20/11/2026.",
    "Please quote invoice 3442 on every payment.",
    "Call the telephone 68988 between 9:00 and 17:30.",
    "The customer 15/06/2026 record shows 1,284.50 EUR.",
    "Order 11-2043-7 shipped on 01/11/2026 at 14:05.",
    "Account 00471121, sort code 20-11-17, ref 7731.",
    "Total 11,111.11 paid on 11/11/2011 by card 4111.",
    "Balance 1,017.71 carried to 31/12/2026, page 1 of 4.",
    "Postcode NW1 6XE, phone +44 20 7946 0958.",
    "Items 17, 71 and 117 cost 1.17, 7.11 and 11.71.",
)
_NUMBER = re.compile(r"[\d,./:+-]*\d[\d,./:+-]*")


def _numbers(text: str) -> list[str]:
    """Whitespace-separated tokens with a digit, end punctuation stripped."""
    return [t.strip(",.:") for t in text.split() if _NUMBER.fullmatch(t.strip(",.:"))]


def _digit_joins(text: str) -> list[str]:
    """Pairs of neighbouring tokens that end and start with a digit ("1 7/03/2026")."""
    tokens = text.split()
    return [f"{a} {b}" for a, b in pairwise(tokens) if a[-1:].isdigit() and b[:1].isdigit()]


@pytest.mark.parametrize("model", [OcrModel.PP_OCRV5, OcrModel.PP_OCRV6])
def test_every_date_and_number_on_a_report_page_reads_exactly_as_its_own_token(
    registry: EngineRegistry, model: OcrModel
) -> None:
    # GIVEN the report page at 150 dpi
    page = render_page(REPORT_LINES, size=(1275, 1650), font_size=25, margin=80)
    buffer = io.BytesIO()
    page.save(buffer, "PNG")

    # WHEN it is read
    done = ocr_document(
        buffer.getvalue(), engine=registry.get(model, "en", JobOptions()), options=JobOptions()
    )
    read = "\n".join(line.text for line in done.pages[0].lines)

    # THEN every number, date, time and code is there as its own token, as often as printed
    truth = "\n".join(REPORT_LINES)
    assert Counter(_numbers(read)) == Counter(_numbers(truth)), read
    # and no space stands between two digits that the page does not have
    assert set(_digit_joins(read)) <= set(_digit_joins(truth))


# The report of the issue: four pages, each dense in dates, amounts, identifiers and phone
# numbers set in narrow digits (1, 7) next to words, printed and scanned at 150 dpi.
REPORT_PAGES = (
    (
        "Quarterly report 2026, page 1 of 4",
        "Report date 17/03/2026, next review 20/11/2026.",
        "Please quote invoice 3442 on every payment.",
        "Call the telephone 68988 between 9:00 and 17:30.",
        "The customer 15/06/2026 record shows 1,284.50 EUR.",
        "Invoice 71117 of 11/07/2026 is still open.",
    ),
    (
        "Revenue 1,117,411.70 against 1,071,114.17 last year.",
        "Costs 11,711.01 and 7,171.11 in the first half.",
        "Customer 40711 owes 2,117.00 since 01/11/2026.",
        "Invoice 11071 paid 17/11/2026, receipt 771104.",
        "Freight 171.17 and duty 1,711.71 per container.",
        "Total payable 21,117.11 by 31/12/2026.",
    ),
    (
        "Customer number 117-4471-11, order 71117.",
        "Telephone 01611 496011, account 11071177.",
        "Sort code 10-17-71 and branch 7117.",
        "Contract 2026-0117 signed at 11:17 on 07/01/2026.",
        "Supplier 17711 telephone 07700 900117.",
        "Order 1171 replaces order 1117.",
    ),
    (
        "Signed 01/01/2027 and 11/07/2026 by both parties.",
        "Due dates 10/10/2026, 21/12/2026 and 31/01/2027.",
        "Balance 7,111.17 carried to 30/11/2026.",
        "Invoice 1711 dated 17/01/2026 for 117.00 EUR.",
        "Review meeting 20/11/2026 at 14:05, room 117.",
        "Report 4 of 4, customer 15/06/2026 closed.",
    ),
)


def _scanned(image: Image.Image, seed: int) -> Image.Image:
    """A printed page as a 150-dpi office scan gives it: grey, a little blur and grain."""
    grey = image.convert("L").filter(ImageFilter.GaussianBlur(0.6))
    noise = np.random.default_rng(seed).normal(0.0, 8.0, (grey.height, grey.width))
    return Image.fromarray(np.clip(np.asarray(grey) + noise, 0, 255).astype(np.uint8))


@pytest.mark.parametrize("model", [OcrModel.PP_OCRV5, OcrModel.PP_OCRV6])
def test_a_four_page_report_scanned_at_150_dpi_reads_every_date_and_number_exactly(
    registry: EngineRegistry, model: OcrModel
) -> None:
    # GIVEN the report printed on letter paper (12-pt type) and scanned at 150 dpi into a PDF
    pages = [
        _scanned(render_page(lines, size=(1275, 1650), font_size=25, margin=80), seed)
        for seed, lines in enumerate(REPORT_PAGES)
    ]
    scan = pdf_pages(pages, resolution=150.0)

    # WHEN it is read
    options = JobOptions()
    done = ocr_document(scan, engine=registry.get(model, "en", options), options=options)

    # THEN each page's dates, amounts, identifiers and phone numbers are its own tokens, exact
    assert len(done.pages) == len(REPORT_PAGES)
    for page, lines in zip(done.pages, REPORT_PAGES, strict=True):
        read = "\n".join(line.text for line in page.lines)
        truth = "\n".join(lines)
        assert Counter(_numbers(read)) == Counter(_numbers(truth)), read
        assert set(_digit_joins(read)) <= set(_digit_joins(truth)), read
