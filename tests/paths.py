"""Where the tests find the repository and their data: sample documents and sample AWS events."""

from __future__ import annotations

from pathlib import Path
from typing import Final

REPO_ROOT: Final = Path(__file__).resolve().parent.parent
SAMPLES: Final = REPO_ROOT / "tests" / "samples"  # documents, with their provenance (README.md)
EVENTS: Final = REPO_ROOT / "tests" / "events"  # AWS events as the services deliver them
