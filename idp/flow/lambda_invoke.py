"""Asynchronous Lambda invocation of a job event: the invoker's dispatch and the processor's
fan-out of a large document's chunks both go through it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from idp.contract.jobs import DispatchedJob

if TYPE_CHECKING:
    from mypy_boto3_lambda import LambdaClient

_ASYNC_ACCEPTED: Final = 202


class ProcessorInvoker(Protocol):
    """Starts one asynchronous run of the OCR processor for a job (or one of its chunks)."""

    @property
    def target(self) -> str: ...

    def invoke_async(self, job: DispatchedJob) -> None: ...


@dataclass(frozen=True)
class LambdaProcessorInvoker:
    """The production `ProcessorInvoker`: `lambda.invoke(InvocationType="Event")`.

    Lambda queues the event and answers 202; retries and the on-failure destination of the
    processor's async configuration take over from there.
    """

    lambda_client: LambdaClient
    function_name: str

    @property
    def target(self) -> str:
        return f"lambda:{self.function_name}"

    def invoke_async(self, job: DispatchedJob) -> None:
        response = self.lambda_client.invoke(
            FunctionName=self.function_name,
            InvocationType="Event",
            Payload=job.model_dump_json(exclude_none=True).encode(),
        )
        if response["StatusCode"] != _ASYNC_ACCEPTED:
            raise RuntimeError(
                f"async invoke of {self.function_name} answered {response['StatusCode']}, "
                f"not {_ASYNC_ACCEPTED}"
            )
