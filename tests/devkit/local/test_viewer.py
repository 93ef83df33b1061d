"""result.html, the page a person looks at: the demo letter (PP-OCRv6 lines) and a table page
(PP-StructureV3 blocks and table) from `idp local run`, opened in a real headless browser."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.browser import headless_chromium, visit
from tests.local_runs import idp_cli
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.ocr

LETTER = REPO_ROOT / "samples" / "sample-letter.pdf"
MTCARS = REPO_ROOT / "tests" / "samples" / "tables" / "mtcars.pdf"


def _run(out: Path, file: Path, *options: str) -> dict[str, Any]:
    done = idp_cli("local", "run", str(file), "--out", str(out), "--json", *options)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Warning" not in done.stderr  # no library's warnings reach the user
    (row,) = json.loads(done.stdout)
    return dict(row)


@pytest.fixture(scope="module")
def letter(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(tmp_path_factory.mktemp("letter"), LETTER)


@pytest.fixture(scope="module")
def mtcars(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(tmp_path_factory.mktemp("mtcars"), MTCARS, "--model", "PP-StructureV3")


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with headless_chromium() as driver:
        yield driver


def _opens_offline(browser: webdriver.Chrome, page: Path) -> None:
    """The page loads with no console entry at all, and asks for nothing but itself."""
    seen = visit(browser, page)
    assert seen.console == []
    assert [url for url in seen.requests if not url.startswith("data:")] == [page.as_uri()]


def test_the_letter_shows_each_line_with_its_text_and_confidence(
    browser: webdriver.Chrome, letter: dict[str, Any]
) -> None:
    viewer = Path(letter["viewer"])
    assert viewer == Path(letter["result"]).with_name("result.html")
    result = json.loads(Path(letter["result"]).read_text())
    _opens_offline(browser, viewer)

    # THEN every page is there, with its picture and a box a line, hovering to text (confidence)
    sections = browser.find_elements(By.CSS_SELECTOR, "section.page")
    assert len(sections) == len(result["pages"])
    first = result["pages"][0]
    boxes = sections[0].find_elements(By.CSS_SELECTOR, "polygon.line")
    assert len(boxes) == len(first["lines"])
    tips = [box.find_element(By.TAG_NAME, "title").get_attribute("textContent") for box in boxes]
    line = first["lines"][0]
    assert tips[0] == f"{line['text']} ({line['confidence']:.2f})"
    assert sections[0].find_element(By.TAG_NAME, "svg").size["width"] > 400


def test_the_table_page_shows_its_blocks_and_its_table_beside_the_page(
    browser: webdriver.Chrome, mtcars: dict[str, Any], tmp_path: Path
) -> None:
    result = json.loads(Path(mtcars["result"]).read_text())
    (table,) = [block for block in result["pages"][0]["blocks"] if block["type"] == "table"]
    _opens_offline(browser, Path(mtcars["viewer"]))

    page = browser.find_element(By.CSS_SELECTOR, "section#page-1")
    # THEN the blocks are drawn by type, the table's among them
    assert page.find_elements(By.CSS_SELECTOR, "polygon.block.table")
    # AND the table stands beside the page as an HTML table, row for row and cell for cell
    rows = page.find_elements(By.CSS_SELECTOR, ".tables table tr")
    assert len(rows) == max(cell["row"] for cell in table["cells"])
    assert [td.text for td in rows[2].find_elements(By.TAG_NAME, "td")][:4] == [
        "Mazda RX4 Wag", "21.0", "6", "160.0"
    ]  # fmt: skip
    picture = page.find_element(By.TAG_NAME, "svg").rect
    beside = page.find_element(By.CSS_SELECTOR, ".tables table").rect
    assert beside["x"] > picture["x"] + picture["width"] - 1

    # AND its screenshot shows both: the page's light paper and the table's drawn rules
    shot = tmp_path / "viewer.png"
    browser.save_screenshot(str(shot))
    pixels = np.asarray(Image.open(shot).convert("L"))
    assert pixels.std() > 20
