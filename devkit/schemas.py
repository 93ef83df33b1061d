"""JSON Schemas of the integration contract, generated from the pydantic models that enforce it.

`schemas/` holds what an integrating system validates against: the job message a producer sends
to the job queue (`idp.contract.jobs.JobRequest`), the result document the pipeline writes as
`result.json` (`idp.contract.results.OcrResult`) and the `detail` of the job-finished event on
the event bus (`idp.contract.events.JobFinished`). They are generated, never edited:
`make schemas` rewrites them, and `tests/devkit/test_schemas.py` fails when one is stale.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from idp.contract.events import EVENT_SOURCE, JOB_FINISHED, JobFinished
from idp.contract.jobs import JobRequest
from idp.contract.results import OcrResult

SCHEMAS_DIR = Path(__file__).resolve().parents[1] / "schemas"
DIALECT = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class Schema:
    name: str
    model: type[BaseModel]
    # A message is validated as it comes in; a result as it is written out.
    mode: Literal["validation", "serialization"]
    description: str

    @property
    def path(self) -> Path:
        return SCHEMAS_DIR / f"{self.name}.schema.json"

    def render(self) -> str:
        schema = self.model.model_json_schema(mode=self.mode)
        schema = {
            "$schema": DIALECT,
            "$id": f"{self.name}.schema.json",
            **schema,
            "description": self.description,
        }
        return json.dumps(schema, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


SCHEMAS = (
    Schema(
        "job-message",
        JobRequest,
        "validation",
        "A job message on the job queue: an S3 object to OCR with a model and a language.",
    ),
    Schema(
        "result",
        OcrResult,
        "serialization",
        "result.json: the pages, lines, boxes and text of one job; boxes are in the rendered"
        " page's pixels, origin top-left.",
    ),
    Schema(
        "job-finished-event",
        JobFinished,
        "serialization",
        f"The detail of an EventBridge event (source {EVENT_SOURCE!r}, detail-type"
        f" {JOB_FINISHED!r}) published once per job that ends COMPLETED or FAILED; event_id is"
        " its idempotency key (the same on every delivery of one transition).",
    ),
)


def main() -> None:
    """Rewrite every schema under schemas/ from its model."""
    SCHEMAS_DIR.mkdir(exist_ok=True)
    for schema in SCHEMAS:
        schema.path.write_text(schema.render(), encoding="utf-8")
        print(f"wrote {schema.path.relative_to(SCHEMAS_DIR.parent)}", file=sys.stderr)


if __name__ == "__main__":
    main()
