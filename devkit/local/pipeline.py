"""One object for the whole local pipeline: emulator + resources + runtime + a client to use it."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from devkit.client import PipelineClient, PipelineNames
from devkit.local.emulator import AwsEndpoint, EmbeddedAws
from devkit.local.resources import LocalResources, provision
from devkit.local.runtime import LocalRuntime
from devkit.local.settings import LocalSettings
from idp.contract.lifetime import Service
from idp.document.ocr.models.cache import ModelCache, is_model_dir

logger = logging.getLogger("devkit.local")


def seed_model_cache(endpoint: AwsEndpoint, bucket: str, models_dir: Path) -> list[str]:
    """Import every model dir found under models_dir into the model-cache bucket."""
    cache = ModelCache(s3=endpoint.client("s3"), bucket=bucket)
    imported = []
    for path in sorted(p for p in models_dir.iterdir() if p.is_dir()):
        if is_model_dir(path):
            cache.import_dir(path.name, path)
            imported.append(path.name)
    return imported


class LocalPipeline(Service):
    """Start with `with LocalPipeline(settings) as pipeline:`; everything stops on exit."""

    def __init__(self, settings: LocalSettings) -> None:
        self.settings = settings
        self._aws = EmbeddedAws()
        self.runtime: LocalRuntime | None = None
        self.resources: LocalResources | None = None
        self.seeded_models: list[str] = []

    @property
    def endpoint(self) -> AwsEndpoint:
        return self._aws.endpoint

    def start(self) -> None:
        settings = self.settings
        settings.work_dir.mkdir(parents=True, exist_ok=True)
        endpoint = self._aws.start()
        self.resources = provision(
            endpoint,
            visibility_timeout_seconds=settings.visibility_timeout_seconds,
            vl_enabled=settings.vl_enabled,
        )
        if settings.models_dir is not None:
            self.seeded_models = seed_model_cache(
                endpoint, self.resources.model_cache_bucket, settings.models_dir
            )
            logger.info("model cache seeded with %s", ", ".join(self.seeded_models) or "nothing")
        self.runtime = LocalRuntime(endpoint=endpoint, resources=self.resources, settings=settings)
        self.runtime.start()

    def stop(self) -> None:
        if self.runtime is not None:
            self.runtime.stop()
            self.runtime = None
        self._aws.stop()

    def client(self) -> PipelineClient:
        if self.resources is None:
            raise RuntimeError("the local pipeline is not started")
        resources = self.resources
        return PipelineClient(
            s3=self.endpoint.client("s3"),
            sqs=self.endpoint.client("sqs"),
            table=self.endpoint.resource("dynamodb").Table(resources.jobs_table),
            pipeline=PipelineNames(
                input_bucket=resources.input_bucket,
                results_bucket=resources.results_bucket,
                jobs_table=resources.jobs_table,
                queue_url=resources.queue_url,
                dlq_url=resources.dlq_url,
            ),
        )

    def received_events(self, *, wait_s: float = 0.0) -> list[dict[str, Any]]:
        """The job-finished events delivered since the last call (EventBridge envelopes, as a
        rule's SQS target receives them): what is there now, waiting up to `wait_s` for the
        first."""
        if self.resources is None:
            raise RuntimeError("the local pipeline is not started")
        sqs, url = self.endpoint.client("sqs"), self.resources.events_queue_url
        deadline = time.monotonic() + wait_s
        events: list[dict[str, Any]] = []
        while True:
            messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
            for message in messages:
                events.append(json.loads(message["Body"]))
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            if not messages and (events or time.monotonic() >= deadline):
                return events
            if not messages:
                time.sleep(0.2)
