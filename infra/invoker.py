"""The invoker: takes job messages off the queue, records them QUEUED and routes each to the
OCR processor (async invoke) or the VL endpoint (scale-out + InvokeEndpointAsync)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from idp.names import Env
from idp.topology import FunctionSpec
from infra.functions import ZipFunction
from infra.nag import acknowledge


class Invoker(Construct):
    """Zip function fed by the job queue with partial batch responses: a failed message is
    retried alone (and reaches the DLQ after the queue's max receives), not its whole batch."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        spec: FunctionSpec,
        code: lambda_.Code,
        layers: Sequence[lambda_.ILayerVersion],
        environment: Mapping[Env, str],
        log_retention: logs.RetentionDays,
        job_queue: sqs.IQueue,
        batch_size: int,
    ) -> None:
        super().__init__(scope, construct_id)
        handler = ZipFunction(
            self,
            "Handler",
            spec=spec,
            code=code,
            layers=layers,
            environment=environment,
            log_retention=log_retention,
            description="Routes job messages to the OCR processor or the VL endpoint",
        )
        self.function = handler.function
        self.role = handler.role
        self.log_group = handler.log_group
        self.function.add_event_source(
            event_sources.SqsEventSource(
                job_queue, batch_size=batch_size, report_batch_item_failures=True
            )
        )
        acknowledge(
            self.function,
            "Serverless-LambdaDLQ",
            "Invoked synchronously by its SQS event source: failed messages go to the job "
            "queue's own dead-letter queue; a function DLQ only applies to async invocations.",
        )
        acknowledge(
            self.function,
            "Serverless-LambdaEventSourceMappingDestination",
            "SQS event source mappings take no on-failure destination; the job queue's redrive "
            "policy moves a message to the DLQ after its maximum receives.",
        )
