"""Fixtures for the zip-Lambda tests: a moto account per test and a `JobRouter` wired to it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import boto3
import pytest
from aws_lambda_powertools import Logger
from moto import mock_aws

from idp.aws.alarms import AlarmRearm
from idp.aws.telemetry import Telemetry
from idp.contract import names
from idp.contract.producers import ProducerPrefixes
from idp.flow.lambda_invoke import LambdaProcessorInvoker
from lambdas.completion.recorder import CompletionRecorder
from lambdas.invoker.dispatch import VlEndpointDispatcher
from lambdas.invoker.routing import JobRouter
from lambdas.scale_in.scaling import EndpointScaler
from tests.lambdas.support import (
    PROCESSOR_FUNCTION,
    REGION,
    RESULTS_BUCKET,
    TEST_LOGGER,
    AwsClients,
    EmulatedAws,
    Faults,
    RecordingProcessorInvoker,
    RouterFactory,
    create_scale_in_alarm,
)

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient


@pytest.fixture(scope="session")
def aws_clients() -> AwsClients:
    # moto (imported above) hooks every botocore client, whenever it was created.
    return AwsClients.create()


@pytest.fixture
def aws(aws_clients: AwsClients) -> Iterator[EmulatedAws]:
    """Buckets, status table, processor function and a VL endpoint in a fresh moto account."""
    # use_docker False: Lambda invokes are accepted (202) without running any code.
    with mock_aws(config={"lambda": {"use_docker": False}}):
        yield EmulatedAws.provision(aws_clients)


@pytest.fixture
def faults() -> Iterator[Faults]:
    injected = Faults()
    yield injected
    injected.undo()


@pytest.fixture
def processor_runs(aws: EmulatedAws) -> RecordingProcessorInvoker:
    return RecordingProcessorInvoker(
        LambdaProcessorInvoker(aws.lambda_client, function_name=PROCESSOR_FUNCTION)
    )


@pytest.fixture
def make_router(aws: EmulatedAws, processor_runs: RecordingProcessorInvoker) -> RouterFactory:
    """A `JobRouter` wired to the emulated account; keyword overrides per test."""

    def build(
        *,
        vl_enabled: bool = True,
        scale_in_alarm: AlarmRearm | None = None,
        max_input_bytes: int = names.DEFAULT_MAX_INPUT_BYTES,
        dispatch_lease_seconds: int = 120,
        logger: Logger = TEST_LOGGER,
        producers: ProducerPrefixes | None = None,
    ) -> JobRouter:
        vl = (
            VlEndpointDispatcher(capacity=aws.capacity(), scale_in_alarm=scale_in_alarm)
            if vl_enabled
            else None
        )
        return JobRouter(
            s3=aws.s3,
            store=aws.store,
            processor=processor_runs,
            vl=vl,
            max_input_bytes=max_input_bytes,
            telemetry=Telemetry(namespace="PaddleIdpTest", service="invoker"),
            logger=logger,
            dispatch_lease_seconds=dispatch_lease_seconds,
            producers=producers or ProducerPrefixes(),
        )

    return build


@pytest.fixture
def recorder(aws: EmulatedAws, processor_runs: RecordingProcessorInvoker) -> CompletionRecorder:
    """The completion handler's logic wired to the emulated account."""
    return CompletionRecorder(
        s3=aws.s3,
        store=aws.store,
        results_bucket=RESULTS_BUCKET,
        telemetry=Telemetry(namespace="PaddleIdpTest", service="completion-handler"),
        logger=TEST_LOGGER,
        processor=processor_runs,
    )


@pytest.fixture
def scale_in_alarm(aws: EmulatedAws) -> CloudWatchClient:
    """The endpoint's idle alarm, in ALARM as a scale-in notification finds it."""
    cloudwatch = boto3.client("cloudwatch", region_name=REGION)
    create_scale_in_alarm(cloudwatch, state="ALARM")
    return cloudwatch


@pytest.fixture
def rearming_scaler(aws: EmulatedAws, scale_in_alarm: CloudWatchClient) -> EndpointScaler:
    """The scale-in handler's logic as deployed: it re-arms the alarm when it leaves it be."""
    return EndpointScaler(
        capacity=aws.capacity(),
        telemetry=Telemetry(namespace="PaddleIdpTest", service="scale-in"),
        logger=TEST_LOGGER,
        cloudwatch=scale_in_alarm,
    )


@pytest.fixture
def scaler(aws: EmulatedAws) -> EndpointScaler:
    """The scale-in handler's logic wired to the emulated VL endpoint."""
    return EndpointScaler(
        capacity=aws.capacity(),
        telemetry=Telemetry(namespace="PaddleIdpTest", service="scale-in"),
        logger=TEST_LOGGER,
    )
