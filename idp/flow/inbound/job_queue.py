"""Job messages as they arrive on the job queue: S3 event notifications and direct JSON messages.

A message either names an input (bucket + key) or it does not. One that names an input becomes a
`JobRequest`, or, when something about it is wrong (unknown model, bad options), a `RejectedJob`
that still carries a deterministic job id so the failure can be recorded where the user looks.
A message that cannot even name an input raises `InvalidMessage`: there is no job to fail.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final
from urllib.parse import unquote_plus

from aws_lambda_powertools.utilities.data_classes import S3Event
from pydantic import ValidationError

from idp.contract import names
from idp.contract.errors import InvalidMessage, JobError, UnsupportedModel
from idp.contract.jobs import JOB_ID_PATTERN, JobItem, JobOptions, JobRequest, RejectedJob
from idp.contract.names import OcrModel
from idp.contract.producers import principal_id

_JOB_ID_RE: Final = re.compile(JOB_ID_PATTERN)


def model_from_key(key: str) -> OcrModel:
    """`input/<model>/<path>` → the model; other keys are not job inputs."""
    if not key.startswith(names.INPUT_PREFIX):
        raise InvalidMessage(f"object key {key!r} is not under {names.INPUT_PREFIX}<model>/")
    rest = key[len(names.INPUT_PREFIX) :]
    model_name, sep, path = rest.partition("/")
    if not sep or not path:
        raise InvalidMessage(
            f"object key {key!r} must look like {names.INPUT_PREFIX}<model>/<file>"
        )
    try:
        return OcrModel.parse(model_name)
    except KeyError:
        known = ", ".join(m.value for m in OcrModel)
        raise UnsupportedModel(
            f"unknown OCR model {model_name!r} in key {key!r}; use one of: {known}"
        ) from None


def read_message(body: str, *, sender: str | None = None) -> list[JobItem]:
    """Turn one SQS message body into job requests and rejected jobs, each owned by who sent it
    (`sender`: the message's SenderId; an S3 event's uploader for its records).

    Returns [] for messages that carry no job (the `s3:TestEvent`, non-create S3 events).
    Raises InvalidMessage for a body that names no input at all (not JSON, no bucket or key):
    such a message has no job to fail, so the caller lets it go to the dead-letter queue.
    """
    try:
        payload: Any = json.loads(body)
    except json.JSONDecodeError as exc:
        raise InvalidMessage(f"message body is not valid JSON: {exc.msg} at {exc.pos}") from None
    if not isinstance(payload, dict):
        raise InvalidMessage("message body must be a JSON object")
    if payload.get("Event") == "s3:TestEvent":
        return []
    if "Records" in payload:
        return _items_from_s3_event(payload)
    return [_item_from_direct(payload, owner=principal_id(sender))]


def parse_message_body(body: str) -> list[JobRequest]:
    """Like `read_message`, but raise the first rejected job's error instead of returning it."""
    requests: list[JobRequest] = []
    for item in read_message(body):
        if isinstance(item, RejectedJob):
            raise item.error
        requests.append(item)
    return requests


def _item_from_direct(payload: dict[str, Any], *, owner: str | None) -> JobItem:
    bucket, key = payload.get("bucket"), payload.get("key")
    if not (isinstance(bucket, str) and bucket.strip() and isinstance(key, str) and key.strip()):
        raise InvalidMessage(
            'a job message needs "bucket" and "key" strings naming the input object '
            f"(got fields: {', '.join(sorted(payload)) or 'none'})"
        )
    try:
        # The owner and origin are ours to say, whatever the message carries.
        return JobRequest.model_validate({**payload, "origin": "message", "owner": owner})
    except JobError as error:  # raised by a field validator (unknown model)
        return _rejected_direct(payload, bucket, key, error, owner=owner)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'message'}: {err['msg']}"
            for err in exc.errors()
        )
        return _rejected_direct(
            payload, bucket, key, InvalidMessage(f"invalid job message: {problems}"), owner=owner
        )


def _rejected_direct(
    payload: dict[str, Any], bucket: str, key: str, error: JobError, *, owner: str | None
) -> RejectedJob:
    job_id = payload.get("job_id")
    lang = payload.get("lang")
    version = payload.get("object_version")
    return RejectedJob(
        bucket=bucket,
        key=key,
        error=error,
        model=str(payload.get("model", "")),
        lang=lang if isinstance(lang, str) else None,
        explicit_job_id=job_id if isinstance(job_id, str) and _JOB_ID_RE.match(job_id) else None,
        options=json.dumps(
            payload.get("options"), sort_keys=True, separators=(",", ":"), default=str
        ),
        object_version=version if isinstance(version, str) else None,
        origin="message",
        owner=owner,
    )


def _items_from_s3_event(payload: dict[str, Any]) -> list[JobItem]:
    items: list[JobItem] = []
    for record in S3Event(payload).records:
        if record.get("eventSource") != "aws:s3" or not record.event_name.startswith(
            "ObjectCreated:"
        ):
            continue
        obj = record.s3.get_object
        key = unquote_plus(obj.key)
        version = obj.version_id or obj.get("sequencer") or obj.etag or None
        bucket = record.s3.bucket.name
        # S3 always names the uploader; an emulator's event may not, which leaves no owner.
        uploader: dict[str, Any] = record.get("userIdentity") or {}
        owner = principal_id(uploader.get("principalId"))
        try:
            model = model_from_key(key)
        except JobError as error:
            model_segment = key[len(names.INPUT_PREFIX) :].partition("/")[0]
            items.append(
                RejectedJob(
                    bucket=bucket,
                    key=key,
                    error=error,
                    model=model_segment if key.startswith(names.INPUT_PREFIX) else "",
                    options=JobOptions().canonical(),
                    object_version=version,
                    origin="s3-event",
                    owner=owner,
                )
            )
            continue
        items.append(
            JobRequest(
                bucket=bucket,
                key=key,
                model=model,
                object_version=version,
                origin="s3-event",
                owner=owner,
            )
        )
    return items
