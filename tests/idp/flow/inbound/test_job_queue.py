"""The job message: S3 events and direct messages, rejections, and deterministic job ids."""

from __future__ import annotations

import json
from typing import Any

import pytest

from idp.contract.errors import InvalidMessage, UnsupportedLanguage, UnsupportedModel
from idp.contract.jobs import JobOptions, JobRequest, RejectedJob, derive_job_id, validate_language
from idp.contract.names import OcrModel, TextLayerMode
from idp.flow.inbound.job_queue import parse_message_body, read_message
from tests.lambdas.support import INPUT_BUCKET, load_event, s3_event_body


def body_of(sample: str) -> str:
    body: str = load_event(sample)["Records"][0]["body"]
    return body


def test_s3_event_key_is_url_decoded_and_the_model_comes_from_its_folder() -> None:
    # GIVEN the sample S3 notification (key with '+' for spaces and %-encoded UTF-8)
    # WHEN it is read
    [request] = read_message(body_of("sqs_s3_object_created.json"))

    # THEN the key is the real object key and the model comes from input/<model>/
    assert isinstance(request, JobRequest)
    assert request.key == "input/PP-OCRv5/scans/Invoice 2026 été.pdf"
    assert (request.model, request.origin) == (OcrModel.PP_OCRV5, "s3-event")
    assert request.object_version == "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY"


def test_s3_test_event_and_non_create_events_carry_no_job() -> None:
    # GIVEN the s3:TestEvent and an ObjectRemoved notification
    removed = json.loads(s3_event_body("input/ocr/a.png"))
    removed["Records"][0]["eventName"] = "ObjectRemoved:Delete"

    # WHEN they are read
    # THEN neither names a job
    assert read_message(body_of("sqs_s3_test_event.json")) == []
    assert read_message(json.dumps(removed)) == []


@pytest.mark.parametrize(
    ("key", "error"),
    [
        pytest.param("input/PP-OCRv9/a.pdf", UnsupportedModel, id="unknown-model"),
        pytest.param("input/a.pdf", InvalidMessage, id="no-model-folder"),
        pytest.param("elsewhere/a.pdf", InvalidMessage, id="outside-input"),
    ],
)
def test_s3_event_with_a_bad_key_becomes_a_rejected_job(key: str, error: type[Exception]) -> None:
    # GIVEN an S3 notification whose key does not name a model
    # WHEN it is read
    [item] = read_message(s3_event_body(key))

    # THEN it is a rejected job that still knows its input and has a stable id
    assert isinstance(item, RejectedJob)
    assert isinstance(item.error, error)
    assert (item.bucket, item.key) == (INPUT_BUCKET, key)
    assert item.job_id == read_message(s3_event_body(key))[0].job_id


def test_direct_message_accepts_model_aliases_and_options() -> None:
    # GIVEN a direct message using an alias and options
    message = {
        "bucket": INPUT_BUCKET,
        "key": "a.pdf",
        "model": "structure",
        "options": {"pdf_scale": 3},
    }

    # WHEN it is read
    [request] = read_message(json.dumps(message))

    # THEN the model is resolved and the options parsed
    assert isinstance(request, JobRequest)
    assert request.model is OcrModel.PP_STRUCTUREV3
    assert request.options.pdf_scale == 3


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        pytest.param({"model": "tesseract"}, "UNSUPPORTED_MODEL", id="unknown-model"),
        pytest.param(
            {"model": "ocr", "options": {"pdf_scale": 0}}, "INVALID_MESSAGE", id="options"
        ),
        pytest.param({"model": "ocr", "colour": "blue"}, "INVALID_MESSAGE", id="unknown-field"),
        pytest.param({}, "INVALID_MESSAGE", id="no-model"),
        pytest.param({"model": "ocr", "job_id": "bad id!"}, "INVALID_MESSAGE", id="bad-job-id"),
    ],
)
def test_direct_message_with_a_bad_field_becomes_a_rejected_job(
    fields: dict[str, Any], code: str
) -> None:
    # GIVEN a message that names an input but asks for something impossible
    message = json.dumps({"bucket": INPUT_BUCKET, "key": "a.pdf", **fields})

    # WHEN it is read
    [item] = read_message(message)

    # THEN it is rejected with the stable code, and parse_message_body raises that error
    assert isinstance(item, RejectedJob)
    assert item.error.code == code
    with pytest.raises(type(item.error)):
        parse_message_body(message)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("{not json", id="malformed"),
        pytest.param("[]", id="not-an-object"),
        pytest.param(json.dumps({"model": "ocr"}), id="no-bucket-or-key"),
        pytest.param(json.dumps({"bucket": INPUT_BUCKET, "key": ""}), id="empty-key"),
    ],
)
def test_message_that_names_no_input_raises_invalid_message(body: str) -> None:
    # GIVEN a body no job can be named from
    # WHEN it is read
    # THEN InvalidMessage is raised (the invoker lets it go to the dead-letter queue)
    with pytest.raises(InvalidMessage):
        read_message(body)


def test_job_id_is_deterministic_and_separates_what_changes_the_result() -> None:
    # GIVEN one request
    request = JobRequest(bucket=INPUT_BUCKET, key="a.pdf", model="ocr")
    same = derive_job_id(request, object_version="v1", lang="en")

    # WHEN any part of the job identity changes
    others = {
        derive_job_id(request, object_version="v2", lang="en"),
        derive_job_id(request, object_version="v1", lang="fr"),
        derive_job_id(
            request.model_copy(update={"options": JobOptions(pdf_scale=3)}),
            object_version="v1",
            lang="en",
        ),
        derive_job_id(
            request.model_copy(update={"model": OcrModel.PP_STRUCTUREV3}),
            object_version="v1",
            lang="en",
        ),
        derive_job_id(
            request.model_copy(update={"options": JobOptions(text_layer=TextLayerMode.OCR)}),
            object_version="v1",
            lang="en",
        ),
    }

    # THEN the same inputs give the same id and every change gives another
    assert derive_job_id(request, object_version="v1", lang="en") == same
    assert same not in others
    assert len(others) == 5


@pytest.mark.parametrize("model", ["PP-StructureV3", "PaddleOCR-VL"])
def test_text_layer_only_is_refused_for_models_that_run_layout(model: str) -> None:
    # GIVEN a job message asking a layout model never to look at pixels
    body = json.dumps(
        {"bucket": INPUT_BUCKET, "key": "a.pdf", "model": model, "options": {"text_layer": "only"}}
    )

    # WHEN it is read
    [item] = read_message(body)

    # THEN it becomes a rejected job that says why
    assert isinstance(item, RejectedJob)
    assert item.error.code == "INVALID_MESSAGE"
    assert 'text_layer "only"' in item.error.message


@pytest.mark.parametrize(
    ("model", "text_model", "refused"),
    [
        ("PP-OCRv5", "PP-OCRv6", "a PP-OCRv5 job reads with PP-OCRv5 itself"),
        ("PP-StructureV3", "PaddleOCR-VL", "text_model reads a page's text lines"),
    ],
)
def test_a_text_model_is_only_for_a_layout_model_and_only_a_text_line_one(
    model: str, text_model: str, refused: str
) -> None:
    # GIVEN a job message naming a text model the job cannot use
    body = json.dumps(
        {
            "bucket": INPUT_BUCKET,
            "key": "a.pdf",
            "model": model,
            "options": {"text_model": text_model},
        }
    )

    # WHEN it is read
    [item] = read_message(body)

    # THEN it becomes a rejected job that says why
    assert isinstance(item, RejectedJob)
    assert refused in item.error.message


def test_a_layout_model_reads_its_regions_with_the_text_model_asked_for() -> None:
    # GIVEN PP-StructureV3 with PP-OCRv6 named by an alias
    request = JobRequest(
        bucket=INPUT_BUCKET, key="a.pdf", model="structure", options={"text_model": "ppocrv6"}
    )
    # THEN the option holds the model; a job without it keeps the id it always had
    assert request.options.text_model == OcrModel.PP_OCRV6
    assert "text_model" not in JobOptions().canonical()


def test_text_layer_defaults_to_auto_and_rejects_unknown_modes() -> None:
    request = JobRequest(bucket=INPUT_BUCKET, key="a.pdf", model="ocr")
    assert request.options.text_layer == TextLayerMode.AUTO
    body = json.dumps(
        {"bucket": INPUT_BUCKET, "key": "a.pdf", "model": "ocr", "options": {"text_layer": "x"}}
    )
    [item] = read_message(body)
    assert isinstance(item, RejectedJob)
    assert "text_layer" in item.error.message


def test_language_codes_are_matched_case_insensitively_and_unknown_ones_rejected() -> None:
    assert validate_language(" EN ") == "en"
    assert validate_language("chinese_cht") == "chinese_cht"
    with pytest.raises(UnsupportedLanguage, match="klingon"):
        validate_language("klingon")
