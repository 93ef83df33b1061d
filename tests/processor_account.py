"""The processor's world in moto (buckets, jobs table, the handler warm) and one warm PP-OCRv5
engine per session: fixtures for every test that runs the processor or its engines (a plugin of
tests/conftest.py).

The engine's model dirs come from a moto S3 model-cache bucket through the real ModelCache:
the offline weights are imported into the bucket, then fetched into an empty temporary root.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from moto import mock_aws

from idp.aws.clients import client
from idp.contract.job_record import JobRecord
from idp.contract.jobs import DispatchedJob, JobOptions
from idp.contract.names import OcrModel
from idp.document.ocr.models.cache import ModelCache
from idp.document.ocr.models.catalogue import OFFLINE_MODELS
from idp.document.ocr.models.onnx_export import export_onnx
from idp.document.ocr.registry import EngineRegistry
from idp.document.ocr.settings import EngineSettings
from idp.flow.lambda_invoke import ProcessorInvoker
from idp.flow.vl_submit import VlEndpointSubmitter
from idp.jobstore.store import JobStore, jobs_table_definition
from ocr_processor_image import handler
from ocr_processor_image.settings import ProcessorSettings
from ocr_processor_image.warm_state import WarmState

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table
    from mypy_boto3_s3 import S3Client

REGION = "us-east-1"
INPUT_BUCKET = "idp-test-input"
RESULTS_BUCKET = "idp-test-results"
CACHE_BUCKET = "idp-test-model-cache"
JOBS_TABLE = "idp-test-jobs"
VL_ENDPOINT = "idp-test-vl"
PRODUCER = "AROAPRODUCEREXAMPLE:tests"  # the sender the invoker would have recorded


def create_jobs_table() -> Table:
    dynamodb = boto3.resource("dynamodb", region_name=REGION)
    return dynamodb.create_table(**jobs_table_definition(JOBS_TABLE))


@dataclass
class WarmEngines:
    """The session's engine registry and where its model dirs were fetched to."""

    registry: EngineRegistry
    fetched: dict[str, Path] = field(default_factory=dict)


@pytest.fixture(scope="session")
def warm_engines(models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> WarmEngines:
    """A PP-OCRv5 'en' engine built from weights served by a moto model-cache bucket."""
    local_root = tmp_path_factory.mktemp("model-root")
    fetched: dict[str, Path] = {}
    for model in OFFLINE_MODELS:
        # The ONNX export the cache archives carry (one-time; kept beside the offline weights).
        export_onnx(models_dir / model)
    with mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=CACHE_BUCKET)
        seeding = ModelCache(s3=s3, bucket=CACHE_BUCKET)
        for model in OFFLINE_MODELS:
            seeding.import_dir(model, models_dir / model)
        cache = ModelCache(s3=s3, bucket=CACHE_BUCKET, local_root=local_root)

        def resolve(model_name: str) -> Path:
            fetched[model_name] = cache.fetch(model_name)
            return fetched[model_name]

        registry = EngineRegistry(resolve=resolve, settings=EngineSettings(cpu_threads=2))
        registry.get(OcrModel.PP_OCRV5, "en", JobOptions())
    return WarmEngines(registry=registry, fetched=fetched)


@dataclass
class Aws:
    """The processor's AWS world in moto, and helpers to submit jobs through the handler."""

    s3: S3Client
    store: JobStore
    settings: ProcessorSettings

    def put_input(self, key: str, data: bytes) -> None:
        self.s3.put_object(Bucket=INPUT_BUCKET, Key=key, Body=data)

    def create_job(
        self,
        key: str,
        data: bytes | None,
        *,
        model: OcrModel = OcrModel.PP_OCRV5,
        lang: str = "en",
        options: JobOptions | None = None,
        owner: str | None = PRODUCER,
    ) -> DispatchedJob:
        """Upload (unless data is None) and record a QUEUED job sent by `owner`, as the
        invoker does."""
        if data is not None:
            self.put_input(key, data)
        options = options or JobOptions()
        job_id = hashlib.sha256(f"{key}|{model}|{lang}".encode()).hexdigest()[:32]
        self.store.create(
            job_id=job_id,
            model=model,
            lang=lang,
            input_bucket=INPUT_BUCKET,
            input_key=key,
            options=options.model_dump(),
            **({"owner": owner} if owner else {}),
        )
        return DispatchedJob(
            job_id=job_id,
            bucket=INPUT_BUCKET,
            key=key,
            model=model,
            lang=lang,
            options=options,
            owner=owner,
        )

    def record(self, job_id: str) -> JobRecord:
        item = self.store.get(job_id)
        assert item is not None, f"no record for {job_id}"
        return item

    def object_bytes(self, bucket: str, key: str) -> bytes:
        return self.s3.get_object(Bucket=bucket, Key=key)["Body"].read()

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        listed = self.s3.list_objects_v2(Bucket=bucket, Prefix=prefix)
        return [obj["Key"] for obj in listed.get("Contents", [])]

    def with_vl_endpoint(
        self, engines: EngineRegistry, *, chunks: ProcessorInvoker | None = None, **settings: Any
    ) -> WarmState:
        """The processor's warm state with a VL endpoint (moto's sagemaker-runtime: inferences
        are accepted, none runs), `chunks` for a CPU document's chunks, and `settings` changed."""
        return WarmState(
            settings=self.settings.model_copy(update=settings),
            s3=self.s3,
            store=self.store,
            engines=engines,
            chunks=chunks,
            vl=VlEndpointSubmitter(
                s3=self.s3,
                runtime=boto3.client("sagemaker-runtime", region_name=REGION),
                endpoint_name=VL_ENDPOINT,
                results_bucket=RESULTS_BUCKET,
            ),
        )


@pytest.fixture
def aws(tmp_path: Path) -> Iterator[Aws]:
    with mock_aws():
        s3 = client("s3", region_name=REGION)  # as the processor builds it (SigV4 presigning)
        for bucket in (INPUT_BUCKET, RESULTS_BUCKET, CACHE_BUCKET):
            s3.create_bucket(Bucket=bucket)
        settings = ProcessorSettings(
            jobs_table=JOBS_TABLE,
            results_bucket=RESULTS_BUCKET,
            model_cache_bucket=CACHE_BUCKET,
            max_pages=5,
            max_input_bytes=5 * 1024 * 1024,
            models_root=tmp_path / "models",
        )
        yield Aws(s3=s3, store=JobStore(create_jobs_table()), settings=settings)


Invoke = Callable[[DispatchedJob | dict[str, Any]], dict[str, Any]]


@pytest.fixture
def start_handler(aws: Aws, lambda_context: Any) -> Iterator[Callable[[EngineRegistry], Invoke]]:
    """`start_handler(engines)`: the handler, warm with the moto clients and `engines`; returns
    a function that invokes it with a job (or any event) and returns its response."""

    def start(engines: EngineRegistry) -> Invoke:
        warm = WarmState(settings=aws.settings, s3=aws.s3, store=aws.store, engines=engines)
        handler.set_warm_state(warm)

        def invoke(event: DispatchedJob | dict[str, Any]) -> dict[str, Any]:
            if isinstance(event, DispatchedJob):
                return handler.lambda_handler(json.loads(event.model_dump_json()), lambda_context)
            return handler.lambda_handler(event, lambda_context)

        return invoke

    yield start
    handler.set_warm_state(None)


@pytest.fixture
def invoke_warm(
    start_handler: Callable[[EngineRegistry], Invoke], warm_engines: WarmEngines
) -> Invoke:
    """The handler with the session's warm PP-OCRv5 engine."""
    return start_handler(warm_engines.registry)


@pytest.fixture
def empty_cache_registry(aws: Aws) -> EngineRegistry:
    """A registry whose model cache (the moto bucket) holds nothing and may not use the hub."""
    cache = ModelCache(
        s3=aws.s3,
        bucket=CACHE_BUCKET,
        local_root=aws.settings.models_root,
        allow_hub_download=False,
    )
    return EngineRegistry(resolve=cache.fetch)
