"""The code blocks of the Integrate page (docs/integrate.md), for the tests that run them as
written."""

from __future__ import annotations

import re
from pathlib import Path

INTEGRATE_PAGE = Path(__file__).resolve().parents[1] / "docs" / "integrate.md"


def integrate_sample(language: str, containing: str) -> str:
    """The one ```language block of the Integrate page that holds `containing`."""
    text = INTEGRATE_PAGE.read_text()
    blocks = re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)
    (sample,) = [str(block) for block in blocks if containing in block]
    return sample
