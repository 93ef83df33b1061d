"""An embedded AWS: moto in server mode on a free loopback port, plus boto3 clients for it."""

from __future__ import annotations

import logging
import threading
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, overload

import boto3
from botocore.config import Config

from idp.contract.lifetime import Service

if TYPE_CHECKING:
    from moto.server import ThreadedMotoServer
    from mypy_boto3_cloudformation import CloudFormationClient
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_dynamodb import DynamoDBClient, DynamoDBServiceResource
    from mypy_boto3_dynamodbstreams import DynamoDBStreamsClient
    from mypy_boto3_events import EventBridgeClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sagemaker import SageMakerClient
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_sqs import SQSClient

REGION = "us-east-1"
ACCOUNT_ID = "123456789012"  # moto's default account
_CREDENTIALS = {"aws_access_key_id": "local", "aws_secret_access_key": "local"}


@dataclass(frozen=True)
class AwsEndpoint:
    """Where boto3 clients should go: the emulator (url set) or the real AWS (url None)."""

    url: str | None
    region: str = REGION

    @overload
    def client(self, service: Literal["cloudformation"]) -> CloudFormationClient: ...
    @overload
    def client(self, service: Literal["cloudwatch"]) -> CloudWatchClient: ...
    @overload
    def client(self, service: Literal["dynamodb"]) -> DynamoDBClient: ...
    @overload
    def client(self, service: Literal["dynamodbstreams"]) -> DynamoDBStreamsClient: ...
    @overload
    def client(self, service: Literal["events"]) -> EventBridgeClient: ...
    @overload
    def client(self, service: Literal["s3"]) -> S3Client: ...
    @overload
    def client(self, service: Literal["sagemaker"]) -> SageMakerClient: ...
    @overload
    def client(self, service: Literal["sns"]) -> SNSClient: ...
    @overload
    def client(self, service: Literal["sqs"]) -> SQSClient: ...
    def client(self, service: str) -> Any:
        config = Config(retries={"mode": "standard", "max_attempts": 5}, connect_timeout=5)
        return boto3.client(
            service,  # type: ignore[call-overload]
            endpoint_url=self.url,
            region_name=self.region,
            config=config,
            **self._credentials(),
        )

    def resource(self, service: Literal["dynamodb"]) -> DynamoDBServiceResource:
        return boto3.resource(
            service, endpoint_url=self.url, region_name=self.region, **self._credentials()
        )

    def _credentials(self) -> dict[str, Any]:
        """The emulator's fixed credentials; none for the real AWS (the usual chain applies)."""
        return dict(_CREDENTIALS) if self.url else {}

    def process_env(self) -> dict[str, str]:
        """Environment for a child process whose boto3 clients must reach this endpoint."""
        env = {"AWS_DEFAULT_REGION": self.region, "AWS_REGION": self.region}
        if self.url:
            env |= {
                "AWS_ENDPOINT_URL": self.url,
                "AWS_ACCESS_KEY_ID": _CREDENTIALS["aws_access_key_id"],
                "AWS_SECRET_ACCESS_KEY": _CREDENTIALS["aws_secret_access_key"],
            }
        return env


class EmbeddedAws(Service):
    """moto's standalone server, started in this process on 127.0.0.1 and a free port."""

    def __init__(self) -> None:
        self._server: ThreadedMotoServer | None = None
        self.endpoint = AwsEndpoint(url=None)

    def start(self) -> AwsEndpoint:
        from moto.server import ThreadedMotoServer

        # The emulator's request log would drown the pipeline's own logs.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        _endpoint_updates_move_last_modified()
        _dynamodb_requests_are_atomic()
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        self._server = server
        self.endpoint = AwsEndpoint(url=f"http://{host}:{port}")
        # moto keeps its state per process: start every emulator empty.
        reset_url = f"{self.endpoint.url}/moto-api/reset"
        reset = urllib.request.Request(reset_url, method="POST")  # noqa: S310 - loopback URL
        with urllib.request.urlopen(reset, timeout=10):  # noqa: S310 - loopback emulator URL
            pass
        return self.endpoint

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None


_DYNAMODB_LOCK = threading.Lock()


def _dynamodb_requests_are_atomic() -> None:
    """DynamoDB applies an item write whole: a read sees all of an UpdateItem or none of it, and
    a condition holds at the moment of the write. moto's server answers each request on its own
    thread and applies an update expression to the stored item one action at a time, so a
    concurrent GetItem could read a job COMPLETED without the result URIs set beside its status.
    The embedded emulator answers one DynamoDB request at a time, as DynamoDB's item writes read.
    """
    from moto.dynamodb.responses import DynamoHandler

    call_action = DynamoHandler.call_action
    if getattr(call_action, "atomic", False):
        return

    def call_action_alone(self: DynamoHandler) -> Any:
        with _DYNAMODB_LOCK:
            return call_action(self)

    call_action_alone.atomic = True  # type: ignore[attr-defined]
    DynamoHandler.call_action = call_action_alone  # type: ignore[method-assign]


def _endpoint_updates_move_last_modified() -> None:
    """SageMaker moves an endpoint's LastModifiedTime on every update; moto does not when an
    update changes only capacity. The scale-in handler reads it (an endpoint scaled out less
    than one alarm window ago is spared), so the embedded emulator behaves like SageMaker here.
    """
    from moto.sagemaker.models import SageMakerModelBackend

    update = SageMakerModelBackend.update_endpoint_weights_and_capacities
    if getattr(update, "moves_last_modified", False):
        return

    def update_and_touch(
        self: SageMakerModelBackend, endpoint_name: str, desired_weights_and_capacities: Any
    ) -> Any:
        result = update(self, endpoint_name, desired_weights_and_capacities)
        self.endpoints[endpoint_name].last_modified_time = datetime.now(UTC)
        return result

    update_and_touch.moves_last_modified = True  # type: ignore[attr-defined]
    SageMakerModelBackend.update_endpoint_weights_and_capacities = update_and_touch  # type: ignore[method-assign]
