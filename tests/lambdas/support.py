"""Helpers for the zip-Lambda tests: the emulated account, sample events and test seams."""

from __future__ import annotations

import copy
import io
import json
import threading
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, Literal

import boto3
from aws_lambda_powertools import Logger
from botocore.exceptions import ClientError

from devkit.local.resources import put_scale_in_alarm
from idp.aws.endpoint import EndpointCapacity
from idp.contract import names
from idp.contract.job_record import JobRecord
from idp.contract.jobs import DispatchedJob
from idp.contract.names import OcrModel
from idp.contract.results import Block, EngineInfo, Line, OcrResult, PageResult, SourceInfo
from idp.flow.lambda_invoke import LambdaProcessorInvoker
from idp.jobstore.store import JobStore, jobs_table_definition
from lambdas.invoker.routing import JobRouter
from tests.job_records import create_queued_job
from tests.paths import EVENTS

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_dynamodb.service_resource import DynamoDBServiceResource, Table
    from mypy_boto3_lambda import LambdaClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sagemaker import SageMakerClient
    from mypy_boto3_sagemaker_runtime import SageMakerRuntimeClient

EVENTS_DIR = EVENTS
REGION = "us-east-1"
# The names the sample events under tests/events/ use.
INPUT_BUCKET = "paddle-idp-test-input"
RESULTS_BUCKET = "paddle-idp-test-results"
JOBS_TABLE = "paddle-idp-test-jobs"
PROCESSOR_FUNCTION = "paddle-idp-test-processor"
VL_ENDPOINT = "paddle-idp-test-vl"
# moto rejects GPU instance types such as ml.g5.xlarge; the emulated endpoint uses a CPU type.
EMULATED_INSTANCE_TYPE: Final = "ml.m5.large"

TEST_LOGGER = Logger(service="lambdas-test")


def load_event(name: str) -> dict[str, Any]:
    """A sample AWS event from tests/events/ (a fresh copy each time)."""
    loaded: dict[str, Any] = json.loads((EVENTS_DIR / name).read_text())
    return loaded


def sqs_event(*bodies: str | dict[str, Any], receive_count: int = 1) -> dict[str, Any]:
    """An SQS → Lambda event with one record per body, shaped like the sample event."""
    template = load_event("sqs_s3_object_created.json")["Records"][0]
    records = []
    for index, body in enumerate(bodies):
        record = copy.deepcopy(template)
        record["messageId"] = f"message-{index}"
        record["body"] = body if isinstance(body, str) else json.dumps(body)
        record["attributes"]["ApproximateReceiveCount"] = str(receive_count)
        records.append(record)
    return {"Records": records}


def sns_event(
    message: dict[str, Any], *, sample: str = "sns_sagemaker_async_success.json"
) -> dict[str, Any]:
    """An SNS → Lambda event carrying `message`, shaped like a sample event."""
    event = load_event(sample)
    event["Records"][0]["Sns"]["Message"] = json.dumps(message)
    return event


def sns_message(sample: str) -> dict[str, Any]:
    """The decoded Message of a sample SNS event."""
    message: dict[str, Any] = json.loads(load_event(sample)["Records"][0]["Sns"]["Message"])
    return message


def s3_event_body(key_in_event: str, *, bucket: str = INPUT_BUCKET, version: str = "v1") -> str:
    """An S3 ObjectCreated notification body (as S3 sends it to SQS) for a URL-encoded key."""
    body = json.loads(load_event("sqs_s3_object_created.json")["Records"][0]["body"])
    obj = body["Records"][0]["s3"]["object"]
    obj.update({"key": key_in_event, "versionId": version})
    body["Records"][0]["s3"]["bucket"].update({"name": bucket, "arn": f"arn:aws:s3:::{bucket}"})
    return json.dumps(body)


# -- test seams ---------------------------------------------------------------------------------
@dataclass
class RecordingProcessorInvoker:
    """Test double at the Lambda-execution boundary, wrapped around the real invoker.

    moto accepts `lambda.invoke(InvocationType="Event")` (202) but cannot run the processor's
    code without Docker, so nothing observable happens in the emulator when the processor is
    started. This spy forwards every call to the production `LambdaProcessorInvoker` (the real
    boto3 call against moto) and records the event the processor would have received.
    """

    inner: LambdaProcessorInvoker
    events: list[DispatchedJob] = field(default_factory=list)

    @property
    def target(self) -> str:
        return self.inner.target

    def invoke_async(self, job: DispatchedJob) -> None:
        self.inner.invoke_async(job)
        self.events.append(job)

    def runs_of(self, job_id: str) -> int:
        return sum(1 for event in self.events if event.job_id == job_id)


class Faults:
    """Faults AWS can produce but moto never does, injected at the client boundary.

    `fail_calls` uses botocore's own `before-call` hook on the real client, so every other call
    still reaches the emulator. Hooks are removed by `undo` (the `faults` fixture calls it),
    because the clients outlive one test.
    """

    def __init__(self) -> None:
        self._hooks: list[tuple[Any, str, Callable[..., None]]] = []

    def fail_calls(
        self,
        client: Any,
        operation: str,
        *,
        code: str = "ThrottlingException",
        message: str = "Rate exceeded",
        times: int = 1,
        skip: int = 0,
        status: int = 400,
    ) -> None:
        """The first `skip` calls of `operation` pass; the `times` after them raise ClientError."""
        passing, remaining = skip, times

        def raise_fault(**_: Any) -> None:
            nonlocal passing, remaining
            if passing > 0:
                passing -= 1
            elif remaining > 0:
                remaining -= 1
                response: Any = {
                    "Error": {"Code": code, "Message": message},
                    "ResponseMetadata": {"HTTPStatusCode": status},
                }
                raise ClientError(response, operation)

        self._register(client, f"before-call.{_service(client)}.{operation}", raise_fault)

    def serialize_calls(self, client: Any) -> None:
        """Process this client's requests one at a time, as DynamoDB does per item.

        DynamoDB applies each conditional write atomically; moto, called from several threads,
        does not. Holding a lock from `before-call` to `after-call` restores the service's
        guarantee, while the code under test still races freely between its calls.
        """
        lock = threading.Lock()
        service = _service(client)

        # Hooks must return None: a before-call hook's return value would replace the response.
        def acquire(**_: Any) -> None:
            lock.acquire()

        def release(**_: Any) -> None:
            lock.release()

        self._register(client, f"before-call.{service}", acquire)
        self._register(client, f"after-call.{service}", release)
        self._register(client, f"after-call-error.{service}", release)

    @staticmethod
    def force_endpoint_status(endpoint_name: str, status: str) -> None:
        """Put the emulated endpoint in a state moto never reaches on its own (e.g. Updating)."""
        from moto.core.models import DEFAULT_ACCOUNT_ID
        from moto.sagemaker.models import sagemaker_backends

        backend = sagemaker_backends[DEFAULT_ACCOUNT_ID][REGION]
        backend.endpoints[endpoint_name].endpoint_status = status

    def undo(self) -> None:
        for client, event, hook in self._hooks:
            client.meta.events.unregister(event, hook)
        self._hooks.clear()

    def _register(self, client: Any, event: str, hook: Callable[..., Any]) -> None:
        client.meta.events.register(event, hook)
        self._hooks.append((client, event, hook))


def _service(client: Any) -> str:
    return str(client.meta.service_model.service_id.hyphenize())


# -- the emulated account -------------------------------------------------------------------------
@dataclass(frozen=True)
class AwsClients:
    """Clients are costly to build (service models), so one set serves every test."""

    s3: S3Client
    dynamodb: DynamoDBServiceResource
    lambda_client: LambdaClient
    sagemaker: SageMakerClient
    runtime: SageMakerRuntimeClient
    iam: Any  # no boto3-stubs extra for IAM here; only create_role is used

    @classmethod
    def create(cls) -> AwsClients:
        session = boto3.Session(
            aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION
        )
        return cls(
            s3=session.client("s3"),
            dynamodb=session.resource("dynamodb"),
            lambda_client=session.client("lambda"),
            sagemaker=session.client("sagemaker"),
            runtime=session.client("sagemaker-runtime"),
            iam=session.client("iam"),
        )


@dataclass(frozen=True)
class EmulatedAws(AwsClients):
    """The resources the zip Lambdas use, created in moto for one test, and the clients."""

    table: Table
    store: JobStore

    @classmethod
    def provision(cls, clients: AwsClients) -> EmulatedAws:
        clients.s3.create_bucket(Bucket=INPUT_BUCKET)
        clients.s3.put_bucket_versioning(
            Bucket=INPUT_BUCKET, VersioningConfiguration={"Status": "Enabled"}
        )
        clients.s3.create_bucket(Bucket=RESULTS_BUCKET)
        table = create_jobs_table(clients.dynamodb)
        create_processor_function(clients)
        create_vl_endpoint(clients)
        return cls(**vars(clients), table=table, store=JobStore(table))

    def queue_job(
        self, job_id: str, model: OcrModel, input_key: str, options: dict[str, Any] | None = None
    ) -> None:
        """Record a QUEUED job (language "en") for `input_key` in the input bucket."""
        create_queued_job(
            self.store,
            job_id,
            model=model,
            input_bucket=INPUT_BUCKET,
            input_key=input_key,
            options=options,
        )

    def put_input(self, key: str, body: bytes = b"%PDF-1.7 test", **metadata: str) -> str:
        response = self.s3.put_object(Bucket=INPUT_BUCKET, Key=key, Body=body, Metadata=metadata)
        return response.get("VersionId", "")

    def capacity(self) -> EndpointCapacity:
        return EndpointCapacity(
            self.sagemaker, endpoint_name=VL_ENDPOINT, variant_name=names.VL_VARIANT_NAME
        )

    def set_vl_instances(self, count: int, *, changed_ago: timedelta = timedelta(days=1)) -> None:
        """The variant at `count` instances since `changed_ago` (its LastModifiedTime; moto
        itself never moves that on a capacity change)."""
        self.sagemaker.update_endpoint_weights_and_capacities(
            EndpointName=VL_ENDPOINT,
            DesiredWeightsAndCapacities=[
                {"VariantName": names.VL_VARIANT_NAME, "DesiredInstanceCount": count}
            ],
        )
        from moto.core.models import DEFAULT_ACCOUNT_ID
        from moto.sagemaker.models import sagemaker_backends

        endpoint = sagemaker_backends[DEFAULT_ACCOUNT_ID][REGION].endpoints[VL_ENDPOINT]
        endpoint.last_modified_time = datetime.now(UTC) - changed_ago

    def vl_instances(self) -> int:
        return self.capacity().read().desired_instances

    def job(self, job_id: str) -> JobRecord:
        record = self.store.get(job_id)
        assert record is not None, f"no job record {job_id}"
        return record

    def object_text(self, bucket: str, key: str) -> str:
        return self.s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode()


def create_jobs_table(dynamodb: DynamoDBServiceResource) -> Table:
    return dynamodb.create_table(**jobs_table_definition(JOBS_TABLE))


def create_processor_function(clients: AwsClients) -> None:
    role = clients.iam.create_role(RoleName="processor-role", AssumeRolePolicyDocument="{}")
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("handler.py", "def lambda_handler(event, context):\n    return None\n")
    clients.lambda_client.create_function(
        FunctionName=PROCESSOR_FUNCTION,
        Runtime="python3.12",
        Role=role["Role"]["Arn"],
        Handler="handler.lambda_handler",
        Code={"ZipFile": code.getvalue()},
    )


def create_vl_endpoint(clients: AwsClients) -> None:
    role = clients.iam.create_role(RoleName="vl-role", AssumeRolePolicyDocument="{}")
    clients.sagemaker.create_model(
        ModelName="paddle-idp-test-vl-model",
        ExecutionRoleArn=role["Role"]["Arn"],
        PrimaryContainer={"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/vl:test"},
    )
    clients.sagemaker.create_endpoint_config(
        EndpointConfigName="paddle-idp-test-vl-config",
        ProductionVariants=[
            {
                "VariantName": names.VL_VARIANT_NAME,
                "ModelName": "paddle-idp-test-vl-model",
                "InitialInstanceCount": 1,
                "InstanceType": EMULATED_INSTANCE_TYPE,
            }
        ],
        AsyncInferenceConfig={
            "OutputConfig": {
                "S3OutputPath": f"s3://{RESULTS_BUCKET}/{names.VL_OUTPUT_PREFIX}",
                "S3FailurePath": f"s3://{RESULTS_BUCKET}/{names.VL_FAILURE_PREFIX}",
            }
        },
    )
    clients.sagemaker.create_endpoint(
        EndpointName=VL_ENDPOINT, EndpointConfigName="paddle-idp-test-vl-config"
    )


RouterFactory = Callable[..., JobRouter]


# -- VL jobs and endpoint outputs (the sample notifications name these) ---------------------------
VL_JOB = "vl-job-0001"  # the inferenceId in tests/events/sns_sagemaker_async_*.json
OCR_JOB = "ocr-job-0001"  # the job in tests/events/sns_lambda_destination_failure.json
OUTPUT_KEY = f"{names.VL_OUTPUT_PREFIX}{VL_JOB}.out"
FAILURE_KEY = f"{names.VL_FAILURE_PREFIX}{VL_JOB}.out"
BOX = ((10.0, 10.0), (200.0, 10.0), (200.0, 40.0), (10.0, 40.0))


def queue_vl_job(aws: EmulatedAws, job_id: str = VL_JOB, *, dispatched: bool = True) -> None:
    aws.queue_job(job_id, OcrModel.PADDLEOCR_VL, "input/PaddleOCR-VL/report.pdf")
    if dispatched:
        aws.store.claim_dispatch(job_id)
        aws.store.record_dispatch(job_id, inference_id=job_id)


def endpoint_result() -> OcrResult:
    """What the VL container answers: an OcrResult, here under the container's own view."""
    page = PageResult(
        page=1,
        width=1224,
        height=1584,
        lines=[Line(text="Quarterly report", box=BOX, confidence=0.98)],
        blocks=[
            Block(type="title", box=BOX, text="Quarterly report", markdown="# Quarterly report")
        ],
        markdown="# Quarterly report",
    )
    return OcrResult.assemble(
        job_id=VL_JOB,
        model=OcrModel.PADDLEOCR_VL.value,
        lang="en",
        engine=EngineInfo(name="paddleocr-vl", version="3.7.0", models=["PaddleOCR-VL-0.9B"]),
        source=SourceInfo(
            bucket=INPUT_BUCKET,
            key="input/PaddleOCR-VL/report.pdf",
            sha256="ab" * 32,
            media_type="application/pdf",
            page_count=1,
            size_bytes=2048,
        ),
        pages=[page],
        timings_ms={"fetch": 40.0, "queue": 0.0, "ocr": 5200.0, "total": 5300.0},
    )


SCALE_IN_ALARM = "paddle-idp-test-vl-backlog-idle"


def create_scale_in_alarm(
    cloudwatch: CloudWatchClient, *, state: Literal["ALARM", "INSUFFICIENT_DATA", "OK"]
) -> str:
    """The VL endpoint's idle-backlog alarm as the stack defines it, forced into `state`."""
    put_scale_in_alarm(cloudwatch, alarm_name=SCALE_IN_ALARM, endpoint_name=VL_ENDPOINT)
    cloudwatch.set_alarm_state(AlarmName=SCALE_IN_ALARM, StateValue=state, StateReason="test")
    return SCALE_IN_ALARM


def alarm_state(cloudwatch: CloudWatchClient, name: str) -> str:
    (alarm,) = cloudwatch.describe_alarms(AlarmNames=[name])["MetricAlarms"]
    return str(alarm["StateValue"])
