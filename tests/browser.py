"""A real headless browser for the tests: Debian's chromium, driven through its chromedriver by
Selenium (scripts/ensure-chromium.sh installs both).

`python -m tests.browser PAGE.html SHOT.png` saves a page's screenshot, as the docs show it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM: Final = Path("/usr/bin/chromium")
CHROMEDRIVER: Final = Path("/usr/bin/chromedriver")
WINDOW: Final = (1400, 1000)


@dataclass(frozen=True)
class Visit:
    """What the browser saw of a page: its console and every request it made."""

    console: list[dict[str, Any]]
    requests: list[str]


@contextmanager
def headless_chromium() -> Iterator[webdriver.Chrome]:
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not binary.is_file():
            raise RuntimeError(f"{binary} is missing: run scripts/ensure-chromium.sh")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument(f"--window-size={WINDOW[0]},{WINDOW[1]}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def visit(driver: webdriver.Chrome, page: Path) -> Visit:
    """Load `page` (a file) and return its console entries and the URLs it requested."""
    driver.get(page.resolve().as_uri())
    log = driver.get_log("performance")  # type: ignore[no-untyped-call]
    events = [json.loads(entry["message"])["message"] for entry in log]
    requests = [
        event["params"]["request"]["url"]
        for event in events
        if event["method"] == "Network.requestWillBeSent"
    ]
    console = driver.get_log("browser")  # type: ignore[no-untyped-call]
    return Visit(console=console, requests=requests)


if __name__ == "__main__":
    with headless_chromium() as browser:
        visit(browser, Path(sys.argv[1]))
        browser.save_screenshot(sys.argv[2])
