"""Scale-in handler entry point: the backlog alarm's SNS notification → `EndpointScaler`."""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from idp.aws.clients import client
from idp.aws.endpoint import EndpointCapacity
from idp.aws.sns import each_message
from idp.contract.names import Service
from lambdas.scale_in.scaling import EndpointScaler
from lambdas.scale_in.settings import ScaleInSettings

logger = Logger(service=Service.SCALE_IN.value)


@cache
def endpoint_scaler() -> EndpointScaler:
    config = ScaleInSettings.from_env()
    return EndpointScaler(
        capacity=EndpointCapacity(
            client("sagemaker"),
            endpoint_name=config.vl_endpoint_name,
            variant_name=config.vl_variant_name,
        ),
        telemetry=config.telemetry(),
        logger=logger,
        cloudwatch=client("cloudwatch"),
    )


def handle_event(event: dict[str, Any], scaler: EndpointScaler) -> dict[str, Any]:
    """Every SNS record of the event; returns what was done for each alarm notification."""
    return {"reports": each_message(event, scaler.handle_message)}


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle_event(event, endpoint_scaler())
