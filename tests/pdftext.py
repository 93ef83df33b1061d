"""Reading a PDF back with poppler's command-line tools: an extractor independent of ours."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from idp.contract.results import PageResult

TOLERANCE_PT = 1.0

_WORD_RE = re.compile(
    r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>'
)
_PAGE_RE = re.compile(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', re.S)


@dataclass(frozen=True)
class Word:
    text: str
    box: tuple[float, float, float, float]  # x0 y0 x1 y1, points, origin top-left


@dataclass(frozen=True)
class Page:
    width: float
    height: float
    words: list[Word]


def _poppler(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is missing: `make setup` installs poppler-utils")
    return path


def pdf_text(pdf: Path, page: int | None = None, *, raw: bool = False) -> str:
    """pdftotext's plain text of the PDF (or of one 1-based page); with `raw`, in the order the
    page's content stream holds it, as a copy of the whole page gives it."""
    pages = ["-f", str(page), "-l", str(page)] if page else []
    order = ["-raw"] if raw else []
    done = subprocess.run(
        [_poppler("pdftotext"), *pages, *order, "-enc", "UTF-8", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def read_pages(pdf: Path) -> list[Page]:
    """Every page's size and words with their boxes, from `pdftotext -bbox`."""
    done = subprocess.run(
        [_poppler("pdftotext"), "-bbox", "-enc", "UTF-8", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    pages = []
    for width, height, body in _PAGE_RE.findall(done.stdout):
        words = [
            Word(text=_unescape(text), box=(float(x0), float(y0), float(x1), float(y1)))
            for x0, y0, x1, y1, text in _WORD_RE.findall(body)
        ]
        pages.append(Page(width=float(width), height=float(height), words=words))
    return pages


def assert_words_in_boxes(page: Page, result: PageResult, points_per_pixel: float) -> None:
    """Every extracted word lies inside the box of a recognized line holding it (in displayed
    points: pixels × `points_per_pixel`)."""
    assert page.words, "no text on the page"
    for word in page.words:
        homes = [
            line
            for line in result.lines
            if word.text in line.text.split()
            and min(x for x, _ in line.box) * points_per_pixel - TOLERANCE_PT <= word.box[0]
            and word.box[2] <= max(x for x, _ in line.box) * points_per_pixel + TOLERANCE_PT
            and min(y for _, y in line.box) * points_per_pixel - TOLERANCE_PT <= word.box[1]
            and word.box[3] <= max(y for _, y in line.box) * points_per_pixel + TOLERANCE_PT
        ]
        assert homes, f"{word} is outside every box that holds it"


def _unescape(text: str) -> str:
    return (
        text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    )
