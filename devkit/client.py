"""A client for a running pipeline, deployed or local: submit documents, read jobs and results.

Used by the `idp` CLI and by the local runner; it speaks only the pipeline's public contract
(the job queue, the input and results buckets, the status table).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from idp.aws.errors import is_missing_object
from idp.aws.s3 import parse_s3_uri
from idp.contract import names
from idp.contract.job_record import JobRecord
from idp.contract.jobs import JobOptions, validate_language
from idp.contract.languages import DEFAULT_LANGUAGE
from idp.contract.names import JobStatus, OcrModel, Output
from idp.contract.results import results_prefix
from idp.contract.topology import scale_in_alarm_name
from idp.flow.result_cache import ResultCache, cache_key
from idp.jobstore.store import JobStore

UPLOAD_PREFIX = "uploads/"  # outside input/, so a submitted upload raises no S3 notification
MIN_ID_PREFIX = 8  # the shortest prefix of a job id that names it (tables show 12 characters)


class JobNotFound(LookupError):
    pass


class NoSuchPage(LookupError):
    pass


class JobStillRunning(RuntimeError):
    pass


class PipelineNotFound(LookupError):
    """A stack that lacks the outputs that name the pipeline's resources."""


class AmbiguousJobId(LookupError):
    """A prefix that more than one job's id starts with."""

    def __init__(self, prefix: str, matches: list[str]) -> None:
        super().__init__(f"job id {prefix!r} is ambiguous: it starts {', '.join(matches)}")
        self.matches = matches


class NoResult(LookupError):
    """A job that has no result (yet, or because it failed): `record` says which."""

    def __init__(self, record: JobRecord, what: str = "result") -> None:
        status = str(record.get("status", "?"))
        error = record.get("error")
        why = f": {error['code']}: {error['message']}" if error else ""
        super().__init__(f"job {record['job_id']} has no {what} (status {status}{why})")
        self.record = record


@dataclass(frozen=True)
class PipelineNames:
    """The resource names a client needs; the VL names are None when VL is not deployed."""

    input_bucket: str
    results_bucket: str
    jobs_table: str
    queue_url: str
    vl_endpoint: str | None = None
    vl_scale_in_alarm: str | None = None
    dlq_url: str | None = None  # the job queue's dead-letter queue
    model_cache_bucket: str | None = None
    data_key_arn: str | None = None  # the stack's KMS key (None: a stack without the output)

    @classmethod
    def from_stack(cls, cloudformation: Any, stack_name: str = names.STACK_NAME) -> PipelineNames:
        """Read the names from a deployed stack's outputs (VlEndpointName only when VL is on)."""
        stack = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
        vl_endpoint = outputs.get(Output.VL_ENDPOINT)
        try:
            return cls(
                input_bucket=outputs[Output.INPUT_BUCKET],
                results_bucket=outputs[Output.RESULTS_BUCKET],
                jobs_table=outputs[Output.JOBS_TABLE],
                queue_url=outputs[Output.JOB_QUEUE_URL],
                dlq_url=outputs.get(Output.DLQ_URL),
                model_cache_bucket=outputs.get(Output.MODEL_CACHE_BUCKET),
                data_key_arn=outputs.get(Output.DATA_KEY_ARN),
                vl_endpoint=vl_endpoint,
                # The stack names its scale-in alarm after itself (infra/stack.py).
                vl_scale_in_alarm=scale_in_alarm_name(stack["StackName"]) if vl_endpoint else None,
            )
        except KeyError as missing:
            raise PipelineNotFound(f"stack {stack_name} has no output {missing}") from None


@dataclass(frozen=True)
class JobProgress:
    """How far a job has come, from its record (chunk counts only for a fanned-out document)."""

    pages_done: int
    pages_total: int | None
    chunks_done: int | None = None
    chunks_total: int | None = None

    @classmethod
    def of(cls, record: JobRecord) -> JobProgress:
        # pages_done counts finished chunks exactly; page_progress adds the pages read so far
        # by chunks still running (advisory), so a bar moves page by page.
        committed = int(record.get("pages_done") or 0)
        reading = sum(int(v) for v in (record.get("page_progress") or {}).values())
        total = record.get("pages_total") or record.get("page_count")
        return cls(
            pages_done=max(committed, reading),
            pages_total=int(total) if total else None,
            chunks_done=record.get("chunks_done"),
            chunks_total=record.get("chunks_total"),
        )

    def describe(self) -> str:
        """`37/250 pages, 3/25 chunks` (what is known of it)."""
        if self.pages_total is None:
            return ""
        text = f"{self.pages_done}/{self.pages_total}"
        if self.chunks_total:
            text += f" ({self.chunks_done or 0}/{self.chunks_total} chunks)"
        return text


@dataclass(frozen=True)
class Submitted:
    """A job sent: its id, the local file and the input key it was uploaded to."""

    job_id: str
    file: Path
    key: str


class PipelineClient:
    def __init__(self, *, s3: Any, sqs: Any, table: Any, pipeline: PipelineNames) -> None:
        self._s3 = s3
        self._sqs = sqs
        self.store = JobStore(table)
        self.names = pipeline

    def submit(
        self,
        file: Path,
        *,
        model: OcrModel,
        lang: str = DEFAULT_LANGUAGE,
        options: JobOptions | None = None,
    ) -> Submitted:
        """Upload a document and send its job message; returns the job id to follow."""
        job_id = uuid.uuid4().hex
        key = f"{UPLOAD_PREFIX}{job_id}/{file.name}"
        self._s3.upload_file(str(file), self.names.input_bucket, key)
        message: dict[str, Any] = {
            "bucket": self.names.input_bucket,
            "key": key,
            "model": model.value,
            "lang": lang,
            "job_id": job_id,
        }
        if options is not None:
            message["options"] = options.model_dump(mode="json")
        self._sqs.send_message(QueueUrl=self.names.queue_url, MessageBody=json.dumps(message))
        return Submitted(job_id=job_id, file=file, key=key)

    def job(self, job_id: str) -> JobRecord | None:
        return self.store.get(job_id)

    def resolve_job_id(self, given: str) -> str:
        """The id of the job `given` names: its whole id, or a prefix of at least MIN_ID_PREFIX
        characters that one job's id starts with (JobNotFound, AmbiguousJobId otherwise)."""
        if self.store.get(given) is not None:
            return given
        if len(given) < MIN_ID_PREFIX:
            raise JobNotFound(f"no job {given} (an id prefix needs {MIN_ID_PREFIX} characters)")
        matches = self.store.ids_starting_with(given)
        if not matches:
            raise JobNotFound(f"no job {given}: `idp jobs` lists the jobs there are")
        if len(matches) > 1:
            raise AmbiguousJobId(given, sorted(matches))
        return matches[0]

    def require_job(self, given: str) -> JobRecord:
        """The record of the job `given` names (see resolve_job_id)."""
        record = self.store.get(self.resolve_job_id(given))
        if record is None:  # deleted between the two reads
            raise JobNotFound(f"no job {given}")
        return record

    def jobs(self, *, status: JobStatus | None = None, since: str | None = None) -> list[JobRecord]:
        if status is not None:
            return list(self.store.list_by_status(status, since=since))
        return self.store.list_all(since=since)

    def wait(
        self,
        job_ids: Iterable[str],
        *,
        timeout_s: float,
        poll_s: float = 0.5,
        on_change: Callable[[str, JobRecord], None] | None = None,
        on_poll: Callable[[str, JobRecord], None] | None = None,
    ) -> dict[str, JobRecord | None]:
        """Poll until every job is terminal or the timeout passes; returns the last records.

        `on_change` hears each status change, `on_poll` every record read (progress bars).
        """
        pending = list(job_ids)
        seen: dict[str, JobRecord | None] = dict.fromkeys(pending)
        deadline = time.monotonic() + timeout_s
        while pending and time.monotonic() < deadline:
            for job_id in list(pending):
                record = self.store.get(job_id)
                previous = seen.get(job_id)
                if record is None:
                    continue
                changed = previous is None or previous.get("status") != record.get("status")
                if changed and on_change:
                    on_change(job_id, record)
                if on_poll:
                    on_poll(job_id, record)
                seen[job_id] = record
                if record and JobStatus(record["status"]).is_terminal:
                    pending.remove(job_id)
            if pending:
                time.sleep(poll_s)
        return seen

    def result_document(self, job_id: str, *, uri_field: str = "result_uri") -> dict[str, Any]:
        """result.json, or the JSON file the record names in `uri_field` (textract_uri)."""
        record = self.require_job(job_id)
        uri = record.get(uri_field)
        if not uri:
            raise NoResult(record, uri_field)
        bucket, key = parse_s3_uri(str(uri))
        body = self._s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        document: dict[str, Any] = json.loads(body)
        return document

    def download_result(self, job_id: str, out_dir: Path) -> Path:
        """Save result.json (and result.md, result.pdf, result.textract.json when there are)
        under out_dir/<job_id>/."""
        record = self.require_job(job_id)
        if not record.get("result_uri"):
            raise NoResult(record)
        target = out_dir / record["job_id"]
        target.mkdir(parents=True, exist_ok=True)
        bucket, key = parse_s3_uri(str(record["result_uri"]))
        json_path = target / names.RESULT_JSON
        self._s3.download_file(bucket, key, str(json_path))
        # result.md exists only for layout models; result.pdf and result.textract.json unless
        # the job turned them off.
        for name in (names.RESULT_MD, names.RESULT_PDF, names.RESULT_TEXTRACT):
            try:
                self._s3.download_file(
                    bucket, key.rsplit("/", 1)[0] + "/" + name, str(target / name)
                )
            except ClientError as exc:
                if not is_missing_object(exc):
                    raise
        return json_path

    def delete_job(self, given: str) -> list[str]:
        """Delete an ended job's results, its result-cache entry and its record (the input stays:
        it is the user's). Returns the S3 URIs deleted."""
        record = self.require_job(given)
        job_id = record["job_id"]
        if not JobStatus(record["status"]).is_terminal:
            raise JobStillRunning(f"job {job_id} is {record['status']}: delete it once it ends")
        bucket = self.names.results_bucket
        keys = [
            item["Key"]
            for page in self._s3.get_paginator("list_objects_v2").paginate(
                Bucket=bucket, Prefix=results_prefix(job_id, owner=record.get("owner"))
            )
            for item in page.get("Contents", [])
        ]
        cached = self._cache_entry(record)
        if cached is not None:
            keys.append(cached)
        for key in keys:
            self._s3.delete_object(Bucket=bucket, Key=key)
        self.store.delete(job_id)
        return [f"s3://{bucket}/{key}" for key in keys]

    def _cache_entry(self, record: JobRecord) -> str | None:
        """The key of the result-cache entry the job's result was filed under, if there is one
        (an endpoint's job has none)."""
        if not record.get("content_sha256"):
            return None
        key = ResultCache.object_key(
            cache_key(
                content_sha256=record["content_sha256"],
                model=OcrModel.parse(record["model"]),
                lang=validate_language(record["lang"]),
                options=JobOptions.model_validate(record.get("options") or {}),
            )
        )
        try:
            self._s3.head_object(Bucket=self.names.results_bucket, Key=key)
        except ClientError as exc:
            if is_missing_object(exc):
                return None
            raise
        return key

    def input_bytes(self, record: JobRecord) -> bytes:
        body = self._s3.get_object(Bucket=record["input_bucket"], Key=record["input_key"])["Body"]
        data: bytes = body.read()
        return data
