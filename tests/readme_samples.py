"""The code blocks of the README's Integrate section, for the tests that run them as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def integrate_sample(language: str, containing: str) -> str:
    """The one ```language block of the Integrate section that holds `containing`."""
    text = README.read_text()
    section = text[text.index("## Integrate") : text.index("## Deploy")]
    blocks = re.findall(rf"```{language}\n(.*?)```", section, flags=re.DOTALL)
    (sample,) = [str(block) for block in blocks if containing in block]
    return sample
