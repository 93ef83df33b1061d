"""Lambda as the pipeline's functions meet it: each function deployed as the stack configures it
(worker processes, or the processor's container image), and the Invoke API, synchronous or as an
event for the async queue (devkit.local.lambda_async)."""

from __future__ import annotations

import json
import logging
import threading
import uuid
from typing import TYPE_CHECKING, Any

from devkit.local.faults import LambdaFaults
from devkit.local.functions import Invocation, LocalFunction
from devkit.local.lambda_async import AsyncInvokes
from devkit.local.service_api import ApiError
from idp.contract.env.functions import Env
from idp.contract.env.processor import ProcessorEnv
from idp.contract.topology import (
    DEFAULT_EPHEMERAL_STORAGE_MIB,
    DEFAULT_PROCESSOR_EPHEMERAL_STORAGE_MIB,
    FUNCTIONS,
    Function,
    converter_ephemeral_storage_mib,
)

if TYPE_CHECKING:
    from pathlib import Path

    from devkit.local.context import ServiceContext
    from devkit.local.functions import EnvironmentFactory

logger = logging.getLogger("devkit.local")


class LambdaService:
    """The deployed functions, invoked as Lambda invokes them, faults included."""

    def __init__(self, context: ServiceContext) -> None:
        self._context = context
        self.functions: dict[Function, LocalFunction] = {}
        self.faults = LambdaFaults(
            context.settings.faults,
            endpoint=context.endpoint,
            jobs_table=context.resources.jobs_table,
            functions=self.functions,
        )
        self.async_invokes = AsyncInvokes(
            context=context,
            invoke_once=self.invoke,
            sns=context.endpoint.client("sns"),
            lost_destinations=self.faults.lost_failure_destinations,
        )

    # -- deployment -----------------------------------------------------------------------------
    def deploy(self, *, runtime_api_url: str, dynamodb_url: str | None) -> None:
        """Create every function with the stack's configuration and the emulator's names.

        `runtime_api_url` serves Lambda Invoke and InvokeEndpointAsync to the handlers;
        `dynamodb_url`, when set, is a fault-injecting proxy in front of the emulator's DynamoDB.
        """
        settings, resources = self._context.settings, self._context.resources
        tmp_root = settings.work_dir / "lambda-tmp"
        tmp_root.mkdir(parents=True, exist_ok=True)
        for function, spec in FUNCTIONS.items():
            env = {
                **self._context.endpoint.process_env(),
                "AWS_ENDPOINT_URL_LAMBDA": runtime_api_url,
                "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": runtime_api_url,
                **resources.function_env(
                    function, vl_enabled=settings.vl_enabled, overrides=self._env_overrides()
                ),
            }
            if dynamodb_url is not None:
                env["AWS_ENDPOINT_URL_DYNAMODB"] = dynamodb_url
            if settings.quiet_functions:
                env |= {"POWERTOOLS_LOG_LEVEL": "WARNING", "POWERTOOLS_METRICS_DISABLED": "true"}
            concurrency = 1
            timeout = float(spec.timeout_seconds)
            image_environment: EnvironmentFactory | None = None
            if function is Function.PROCESSOR:
                # Each Lambda environment has vCPUs of its own; here the environments share this
                # machine's cores, so each gets its share of them instead of oversubscribing.
                env[ProcessorEnv.CPU_THREADS] = str(settings.processor_cpu_threads)
                concurrency = settings.processor_concurrency
                timeout = settings.processor_timeout_seconds
                if settings.processor_image:
                    image_environment = self._image_environment(
                        Function.PROCESSOR, settings.processor_image
                    )
            if function is Function.CONVERTER:
                # Its time limit ends a conversion first; the function's timeout stays above it.
                timeout = max(timeout, settings.conversion_time_limit_seconds + 60)
                if settings.converter_image:
                    image_environment = self._image_environment(
                        Function.CONVERTER, settings.converter_image
                    )
            if image_environment is None:
                # A worker process gets a /tmp of its own, the only writable path on Lambda; an
                # image brings its own /tmp, HOME and PaddleX settings, as on Lambda.
                env |= _worker_tmp_env(function, tmp_root)
            self.functions[function] = LocalFunction(
                name=resources.function_names[function],
                handler=spec.handler,
                env=env,
                memory_mb=spec.memory_mb,
                timeout_s=timeout,
                concurrency=concurrency,
                environment_factory=image_environment,
            )

    def _env_overrides(self) -> dict[Env, str]:
        """The stack's settings that the local run changes (smaller limits, shorter waits)."""
        settings = self._context.settings
        return {
            Env.MAX_PAGES: str(settings.max_pages),
            Env.MAX_INPUT_BYTES: str(settings.max_input_bytes),
            Env.CHUNK_PAGES: str(settings.chunk_pages),
            # The claim must expire before the shortened visibility timeout does.
            Env.DISPATCH_LEASE_SECONDS: str(max(1, settings.visibility_timeout_seconds // 2)),
            Env.STALE_PROCESSING_SECONDS: str(settings.stale_processing_seconds),
            Env.STALE_QUEUED_SECONDS: str(settings.stale_queued_seconds),
            Env.CONVERSION_TIME_LIMIT: str(settings.conversion_time_limit_seconds),
        }

    def _image_environment(self, function: Function, image: str) -> EnvironmentFactory:
        """Execution environments of `function` as containers of `image`, as on Lambda."""
        from devkit.local.lambda_container import ContainerEnvironment, ContainerFunction

        spec = FUNCTIONS[function]
        container = ContainerFunction(
            image=image,
            handler=spec.handler,
            function_name=self._context.resources.function_names[function],
            memory_mb=spec.memory_mb,
            ephemeral_storage_mb=(
                DEFAULT_PROCESSOR_EPHEMERAL_STORAGE_MIB
                if function is Function.PROCESSOR
                else converter_ephemeral_storage_mib(self._context.settings.max_input_bytes)
                if function is Function.CONVERTER
                else DEFAULT_EPHEMERAL_STORAGE_MIB
            ),
            region=self._context.endpoint.region,
        )
        return lambda function_env: ContainerEnvironment(container, function_env)

    def shutdown(self) -> None:
        for function in self.functions.values():
            function.shutdown()

    # -- invocations ----------------------------------------------------------------------------
    def invoke(
        self, function: Function, event: Any, *, attempt: int = 1, request_id: str | None = None
    ) -> Invocation:
        """Run one invocation; a processor crash that is due strikes while it runs."""
        self._context.stats.invocations[function.value] += 1
        finished = threading.Event()
        request_id = request_id or str(uuid.uuid4())
        if function is Function.PROCESSOR:
            self.faults.arm_processor_crash(
                event, attempt=attempt, request_id=request_id, finished=finished
            )
        try:
            return self.functions[function].invoke(event, request_id=request_id)
        finally:
            finished.set()

    def on_invoke_api(
        self, name: str, invocation_type: str, body: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        """Lambda's Invoke API, as the handlers call it (devkit.local.service_api)."""
        function = self._function_by_name(name)
        event = json.loads(body or b"{}")
        if self.faults.lambda_invoke_throttles.take():
            logger.warning("fault: throttling Lambda Invoke of %s", function.value)
            raise ApiError(429, "TooManyRequestsException", "Rate Exceeded.")
        if invocation_type != "Event":
            result = self.invoke(function, event)
            if result.ok:
                return 200, json.dumps(result.payload).encode(), {}
            # A function error is still a 200, its body Lambda's error and a header saying so.
            error = {"errorType": result.error_type, "errorMessage": result.error_message}
            if result.outcome == "timeout":
                error["errorType"] = "Sandbox.Timedout"
            return 200, json.dumps(error).encode(), {"X-Amz-Function-Error": "Unhandled"}
        copies = 1
        if function is Function.PROCESSOR:
            self._context.stats.processor_events[str(event.get("job_id"))] += 1
            chunk = event.get("chunk")
            if isinstance(chunk, dict):
                self._context.stats.chunk_events[f"{event.get('job_id')}/{chunk.get('index')}"] += 1
                if self.faults.duplicate_chunk_events.take():
                    logger.warning("fault: chunk %s is delivered twice", chunk.get("index"))
                    copies = 2
        self.async_invokes.submit(function, event, copies=copies)
        return 202, b"", {}

    def _function_by_name(self, name: str) -> Function:
        short = name.rsplit(":", 1)[-1]
        for function, function_name in self._context.resources.function_names.items():
            if short == function_name:
                return function
        raise ApiError(404, "ResourceNotFoundException", f"Function not found: {name}")


def _worker_tmp_env(function: Function, tmp_root: Path) -> dict[str, str]:
    """A worker process's own /tmp (and HOME in it); the processor keeps PaddleX's cache there."""
    function_tmp = tmp_root / function.value
    function_tmp.mkdir(exist_ok=True)
    env = {"HOME": str(function_tmp), "TMPDIR": str(function_tmp)}
    if function is Function.PROCESSOR:
        env |= {
            "PADDLE_PDX_CACHE_HOME": str(function_tmp / "paddlex"),
            "PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK": "True",
        }
    return env
