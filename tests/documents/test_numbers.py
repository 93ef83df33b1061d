"""Numbers, dates and codes read exactly, each as its own token: a report page at 150 dpi dense in
dates, amounts, identifiers and phone numbers, read by PP-OCRv5 and PP-OCRv6 through the page
path (the space-aware decoder's rule for gaps inside numbers: idp.document.ocr.paddle.decoder)."""

from __future__ import annotations

import io
import re
from collections import Counter
from itertools import pairwise

import pytest

from devkit.synthetic import render_page
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
