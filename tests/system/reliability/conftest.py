"""A running local pipeline per test module, with small limits and short timeouts.

Real handlers in their own worker processes, real PP-OCRv5 on the offline weights, the embedded
AWS emulator. The limits are small so that the oversized and over-long inputs stay cheap, and the
visibility timeout is short so that a message which names no job reaches the DLQ in seconds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from devkit.client import PipelineClient, Submitted
from devkit.local.pipeline import LocalPipeline
from devkit.local.resources import LocalResources
from devkit.local.runtime import LocalRuntime
from devkit.synthetic import encode, render_page
from devkit.textmetrics import character_error_rate
from idp.contract import names
from idp.contract.job_record import JobRecord
from tests.local_runs import running_pipeline

MAX_PAGES = 5
MAX_INPUT_BYTES = 2_000_000
VISIBILITY_TIMEOUT_S = 2
JOB_TIMEOUT_S = 180.0


@dataclass
class Reliability:
    """The running pipeline and the handles the tests drive it with."""

    pipeline: LocalPipeline
    client: PipelineClient

    @property
    def resources(self) -> LocalResources:
        assert self.pipeline.resources is not None
        return self.pipeline.resources

    @property
    def runtime(self) -> LocalRuntime:
        assert self.pipeline.runtime is not None
        return self.pipeline.runtime

    @property
    def sqs(self) -> Any:
        return self.pipeline.endpoint.client("sqs")

    @property
    def s3(self) -> Any:
        return self.pipeline.endpoint.client("s3")

    def put_input(self, key: str, data: bytes) -> None:
        self.s3.put_object(Bucket=self.resources.input_bucket, Key=key, Body=data)

    def send(self, body: dict[str, Any] | str) -> None:
        """A raw message on the job queue, as any producer could send it."""
        text = body if isinstance(body, str) else json.dumps(body)
        self.sqs.send_message(QueueUrl=self.resources.queue_url, MessageBody=text)

    def direct_message(
        self, key: str, *, job_id: str, model: str = "PP-OCRv5", lang: str = "en"
    ) -> dict[str, Any]:
        return {
            "bucket": self.resources.input_bucket,
            "key": key,
            "model": model,
            "lang": lang,
            "job_id": job_id,
        }

    def run(self, path: Path, *, lang: str = "en") -> tuple[Submitted, JobRecord]:
        """Submit a PP-OCRv5 job for `path` and wait for its terminal record."""
        submitted = self.client.submit(path, model=names.OcrModel.PP_OCRV5, lang=lang)
        return submitted, self.wait_terminal([submitted.job_id])[submitted.job_id]

    def record(self, job_id: str) -> JobRecord:
        record = self.client.job(job_id)
        assert record is not None, f"no job record for {job_id}"
        return record

    def wait_terminal(self, job_ids: list[str]) -> dict[str, JobRecord]:
        records = self.client.wait(job_ids, timeout_s=JOB_TIMEOUT_S, poll_s=0.25)
        stuck = {
            job_id: record["status"] if record else None
            for job_id, record in records.items()
            if record is None or not names.JobStatus(record["status"]).is_terminal
        }
        assert not stuck, f"jobs not terminal after {JOB_TIMEOUT_S:.0f} s: {stuck}"
        return {job_id: record for job_id, record in records.items() if record is not None}

    def assert_completed_once(self, record: JobRecord, text: str) -> None:
        """The job completed after one processor run, its first page reading `text`."""
        job_id = record[names.JOB_ID_ATTR]
        assert record["status"] == names.JobStatus.COMPLETED, record.get("error")
        assert record["attempts"] == 1
        assert self.runtime.stats.processor_events[job_id] == 1
        result = self.client.result_document(job_id)
        recognized = "\n".join(line["text"] for line in result["pages"][0]["lines"])
        assert character_error_rate(text, recognized) <= 0.05

    def queue_drained(self) -> bool:
        """Nothing waiting and nothing in flight on the job queue."""
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=self.resources.queue_url,
            AttributeNames=[
                "ApproximateNumberOfMessages",
                "ApproximateNumberOfMessagesNotVisible",
                "ApproximateNumberOfMessagesDelayed",
            ],
        )["Attributes"]
        return all(int(value) == 0 for value in attributes.values())


def good_page_png(text: str) -> bytes:
    """A small page with one known line: cheap for the engine on a 2-core machine."""
    return encode(render_page([text], size=(900, 90), font_size=30, margin=20), "PNG")


@pytest.fixture(scope="module")
def reliability(
    tmp_path_factory: pytest.TempPathFactory, models_dir: Path
) -> Iterator[Reliability]:
    with running_pipeline(
        tmp_path_factory.mktemp("reliability-pipeline"),
        models_dir,
        vl_enabled=False,
        max_pages=MAX_PAGES,
        max_input_bytes=MAX_INPUT_BYTES,
        visibility_timeout_seconds=VISIBILITY_TIMEOUT_S,
        invoker_batch_size=2,  # two deliveries of one message can share a batch
        processor_concurrency=1,
    ) as pipeline:
        yield Reliability(pipeline=pipeline, client=pipeline.client())
