"""The integration contract's JSON Schemas (devkit.schemas, `schemas/`): committed as generated
from the pydantic models, and saying what the models say, on a job message and on a real
result.json (the demo letter read by real PP-OCRv5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from devkit.schemas import SCHEMAS, Schema
from idp.contract.errors import JobError
from idp.contract.jobs import JobOptions, JobRequest
from idp.contract.names import OcrModel
from idp.contract.results import OcrResult
from idp.document.ocr.models.cache import ModelCache
from idp.document.ocr.pipeline import ocr_document
from idp.document.ocr.registry import EngineRegistry
from idp.document.ocr.settings import EngineSettings
from tests.docs_samples import integrate_sample
from tests.paths import REPO_ROOT

DEMO_LETTER = REPO_ROOT / "samples" / "sample-letter.pdf"
BY_NAME = {schema.name: schema for schema in SCHEMAS}


def validator(name: str) -> Draft202012Validator:
    schema = json.loads(BY_NAME[name].path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda schema: schema.name)
def test_each_committed_schema_is_what_its_model_generates(schema: Schema) -> None:
    # GIVEN the schema file in schemas/ WHEN compared with what the model generates today
    # THEN it is the same: a stale schema fails here (run `make schemas`)
    assert schema.path.is_file(), f"{schema.path} missing: run `make schemas`"
    assert schema.path.read_text(encoding="utf-8") == schema.render(), (
        f"{schema.path.name} is stale: run `make schemas`"
    )


JOB_MESSAGE: dict[str, Any] = {
    "bucket": "idp-input-123456789012",
    "key": "input/PP-OCRv5/invoices/2041.pdf",
    "model": "PP-OCRv5",
    "lang": "en",
    "job_id": "invoice-2041",
    "options": {"pdf_scale": 2.5, "searchable_pdf": False, "text_layer": "auto"},
}


def _accepted_by_model(message: dict[str, Any]) -> bool:
    try:
        JobRequest.model_validate(message)
    except (ValidationError, JobError):
        return False
    return True


@pytest.mark.parametrize(
    ("change", "valid"),
    [
        ({}, True),
        ({"options": {"languages": ["en"]}}, False),  # no such option
        ({"model": "Textract"}, False),
        ({"job_id": "a job id with spaces"}, False),
        ({"key": ""}, False),
        ({"priority": "high"}, False),  # no such field
    ],
    ids=["full", "unknown-option", "unknown-model", "bad-job-id", "empty-key", "unknown-field"],
)
def test_the_job_message_schema_accepts_what_the_queue_accepts(
    change: dict[str, Any], valid: bool
) -> None:
    # GIVEN a job message, as written or changed
    message = {**JOB_MESSAGE, **change}

    # WHEN the schema and the model the invoker parses it with both judge it
    # THEN they agree
    assert validator("job-message").is_valid(message) is valid
    assert _accepted_by_model(message) is valid


def test_the_documented_job_message_is_valid_and_shows_every_field_and_option() -> None:
    # GIVEN the job message of the Integrate page
    message = json.loads(integrate_sample("json", '"options"'))

    # THEN the schema and the invoker take it, and it names every option at its default and
    # every field a producer sets (object_version and origin come from S3 events; the owner is
    # the sender, never the message)
    assert validator("job-message").is_valid(message)
    assert _accepted_by_model(message)
    assert message["options"] == JobOptions().model_dump(mode="json")
    producer_fields = set(JobRequest.model_fields) - {"object_version", "origin", "owner"}
    assert set(message) == producer_fields


def test_the_documented_result_example_is_a_valid_result() -> None:
    example = json.loads(integrate_sample("json", '"schema_version"'))
    assert validator("result").is_valid(example)
    assert OcrResult.model_validate(example).pages[0].lines[0].words[0].text == "Total"


def test_the_schema_names_models_canonically_where_the_queue_also_takes_aliases() -> None:
    # GIVEN a message naming its model by an alias the invoker resolves ("ocr" is PP-OCRv5)
    message = {**JOB_MESSAGE, "model": "ocr"}

    # THEN the invoker takes it, and the schema asks for the canonical name a producer should send
    assert JobRequest.model_validate(message).model is OcrModel.PP_OCRV5
    assert not validator("job-message").is_valid(message)


@pytest.mark.ocr
def test_a_real_result_json_matches_the_result_schema(models_dir: Path, tmp_path: Path) -> None:
    # GIVEN the demo letter read by real PP-OCRv5, assembled and serialized as result.json is
    cache = ModelCache(local_root=tmp_path, search_roots=[models_dir])
    registry = EngineRegistry(resolve=cache.fetch, settings=EngineSettings(cpu_threads=2))
    engine = registry.get(OcrModel.PP_OCRV5, "en", JobOptions())
    outcome = ocr_document(DEMO_LETTER.read_bytes(), engine=engine, options=JobOptions())
    result = OcrResult.assemble(
        job_id="schema-check",
        model=OcrModel.PP_OCRV5.value,
        lang="en",
        engine=engine.info,
        source=outcome.source(bucket="input", key="input/PP-OCRv5/sample-letter.pdf"),
        pages=outcome.pages,
        timings_ms=outcome.timings_ms,
    )
    document = json.loads(result.model_dump_json())
    assert document["pages"][0]["lines"]

    # WHEN it is validated against schemas/result.schema.json THEN it holds
    errors = [error.message for error in validator("result").iter_errors(document)]
    assert errors == []
    # AND the schema is strict: a field it does not know is refused
    assert not validator("result").is_valid({**document, "confidence": 0.9})
