"""The VL endpoint on one machine: SageMaker async-inference semantics around the real container.

The container server process (sagemaker_container) starts when the endpoint variant's desired
instance count goes 0 → 1 and stops when it returns to 0. Requests wait in a queue while there is
no capacity, run up to MaxConcurrentInvocationsPerInstance at a time, and end as an output or
failure object in S3 plus a notification on the success or error topic — as on AWS.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from devkit.local.faults import FaultCounter
from devkit.local.loops import Loops
from devkit.local.service_api import ApiError, AsyncInvokeAccepted, AsyncInvokeRequest
from idp.aws.s3 import parse_s3_uri
from idp.contract import names
from idp.contract.env.functions import Env
from idp.contract.env.vl import VL_ENGINE_PADDLEOCR_VL, VL_ENGINE_SUBSTITUTE_PPOCRV5, VlEnv
from idp.contract.timestamps import utc_now
from idp.contract.topology import Topic

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sns import SNSClient

    from devkit.local.context import ServiceContext

logger = logging.getLogger("devkit.local.vl")

# Seconds of backlog without capacity before the step-scaling safety net scales out.
_SAFETY_NET_DELAY_SECONDS = 3.0


@dataclass
class _Pending:
    inference_id: str
    input_location: str
    content_type: str
    output_location: str
    failure_location: str
    received: str


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class VlEndpointSimulator:
    """The endpoint's variant: its instance (the container server) and its request queue."""

    def __init__(self, context: ServiceContext) -> None:
        settings = context.settings
        self._endpoint = context.endpoint
        self._resources = context.resources
        self._settings = settings
        self._stop = context.stop
        self._pending: deque[_Pending] = deque()
        self._in_flight = 0
        self._cv = threading.Condition()
        self._process: subprocess.Popen[bytes] | None = None
        self._server_url: str | None = None
        self._ready = False
        self._start_error: dict[str, str] | None = None
        self._instances = 0
        self._loops = Loops(context.stop)
        self.starts = 0  # how many times the container was started (tests read it)
        self.peak_in_flight = 0  # the most invocations the instance ran at once
        self._log_path = settings.work_dir / "vl-container.log"
        self._throttles = FaultCounter(settings.faults.endpoint_invoke_throttles)
        self._inference_errors = FaultCounter(settings.faults.vl_inference_errors)

    # -- public ---------------------------------------------------------------------------------
    def start(self) -> None:
        self._loops.spawn("vl-capacity", self._watch_capacity)
        for i in range(names.VL_MAX_CONCURRENT_INVOCATIONS):
            self._loops.spawn(f"vl-invoke-{i}", self._dispatch)

    def stop(self) -> None:
        with self._cv:
            self._cv.notify_all()
        self._loops.join()
        self._stop_server()

    @property
    def throttled(self) -> int:
        """How many InvokeEndpointAsync calls the throttling fault refused."""
        return self._throttles.fired

    @property
    def instance_count(self) -> int:
        return self._instances

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def backlog(self) -> int:
        with self._cv:
            return len(self._pending) + self._in_flight

    def backlog_per_instance(self) -> float | None:
        """ApproximateBacklogSizePerInstance; None (missing data) while there is no instance."""
        if self._instances == 0:
            return None
        return self.backlog() / self._instances

    def accept(self, request: AsyncInvokeRequest) -> AsyncInvokeAccepted:
        if self._throttles.take():
            logger.warning("fault: throttling InvokeEndpointAsync")
            raise ApiError(400, "ThrottlingException", "Rate exceeded")
        if request.endpoint_name != self._resources.vl_endpoint:
            raise ApiError(400, "ValidationError", f"Endpoint {request.endpoint_name} not found.")
        try:
            parse_s3_uri(request.input_location)
        except ValueError:
            raise ApiError(400, "ValidationError", "InputLocation must be an s3:// URI") from None
        inference_id = request.inference_id or str(uuid.uuid4())
        bucket = self._resources.results_bucket
        pending = _Pending(
            inference_id=inference_id,
            input_location=request.input_location,
            content_type=request.content_type,
            output_location=f"s3://{bucket}/{names.VL_OUTPUT_PREFIX}{inference_id}.out",
            failure_location=f"s3://{bucket}/{names.VL_FAILURE_PREFIX}{inference_id}-error.out",
            received=utc_now(),
        )
        with self._cv:
            self._pending.append(pending)
            self._cv.notify_all()
        return AsyncInvokeAccepted(
            inference_id=inference_id,
            output_location=pending.output_location,
            failure_location=pending.failure_location,
        )

    # -- capacity: follow the variant's desired instance count ----------------------------------
    def _watch_capacity(self) -> None:
        sagemaker = self._endpoint.client("sagemaker")
        backlog_since: float | None = None
        while not self._stop.wait(0.5):
            described = sagemaker.describe_endpoint(EndpointName=self._resources.vl_endpoint)
            variant = next(
                v
                for v in described["ProductionVariants"]
                if v["VariantName"] == names.VL_VARIANT_NAME
            )
            desired = int(
                variant.get("DesiredInstanceCount", variant.get("CurrentInstanceCount", 0))
            )
            if desired > 0 and not self.running and self._start_error is None:
                self._start_server()
            elif desired == 0 and self._process is not None:
                self._stop_server()
                self._start_error = None
            self._instances = desired
            # Step scaling on HasBacklogWithoutCapacity: the stack's safety net for scale-out.
            if desired == 0 and self.backlog() > 0:
                backlog_since = backlog_since or time.monotonic()
                if time.monotonic() - backlog_since > _SAFETY_NET_DELAY_SECONDS:
                    logger.info("backlog without capacity: safety-net scale-out to 1")
                    sagemaker.update_endpoint_weights_and_capacities(
                        EndpointName=self._resources.vl_endpoint,
                        DesiredWeightsAndCapacities=[
                            {"VariantName": names.VL_VARIANT_NAME, "DesiredInstanceCount": 1}
                        ],
                    )
                    backlog_since = None
            else:
                backlog_since = None

    def _start_server(self) -> None:
        port = _free_port()
        engine = (
            VL_ENGINE_SUBSTITUTE_PPOCRV5 if self._settings.vl_substitute else VL_ENGINE_PADDLEOCR_VL
        )
        env = {
            **os.environ,
            **self._endpoint.process_env(),
            VlEnv.ENGINE.value: engine,
            VlEnv.HOST.value: "127.0.0.1",
            VlEnv.PORT.value: str(port),
            Env.MODEL_CACHE_BUCKET.value: self._resources.model_cache_bucket,
            "PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK": "True",
            "PADDLE_PDX_CACHE_HOME": str(self._settings.work_dir / "vl-paddlex"),
        }
        if self._settings.models_dir is not None:
            env["IDP_MODELS_DIR"] = str(self._settings.models_dir)
        logger.info("VL endpoint scaled to 1: starting the container server (%s)", engine)
        log = self._log_path.open("ab")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "sagemaker_container.server"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self.starts += 1
        self._server_url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + self._settings.vl_startup_timeout_seconds
        while time.monotonic() < deadline and not self._stop.is_set():
            status, body = self._get("/ping")
            if status == 200:
                with self._cv:
                    self._ready = True
                    self._cv.notify_all()
                logger.info("VL container healthy at %s", self._server_url)
                return
            error = body.get("error") if isinstance(body, dict) else None
            if self._process.poll() is not None or (
                isinstance(error, dict) and error.get("code") and body.get("state") == "failed"
            ):
                break
            time.sleep(0.5)
        if self._stop.is_set():
            return  # stopped while starting: nothing failed
        self._fail_start(body if isinstance(body, dict) else {})

    def _fail_start(self, ping_body: dict[str, Any]) -> None:
        error = ping_body.get("error") if isinstance(ping_body.get("error"), dict) else None
        if error is None:
            tail = self._log_tail()
            error = {
                "code": "MODEL_UNAVAILABLE"
                if "weight" in tail.lower()
                else "ENDPOINT_START_FAILED",
                "message": f"VL container did not become healthy: {tail[-600:]}",
            }
        logger.error("VL container failed to start: %s", error)
        with self._cv:
            self._start_error = {
                "code": str(error.get("code")),
                "message": str(error.get("message")),
            }
            self._cv.notify_all()

    def _log_tail(self) -> str:
        try:
            return self._log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def _stop_server(self) -> None:
        process, self._process = self._process, None
        with self._cv:
            self._ready = False
        if process is not None and process.poll() is None:
            logger.info("VL endpoint scaled to 0: stopping the container server")
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _get(self, path: str) -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(f"{self._server_url}{path}", timeout=5) as response:  # noqa: S310
                return response.status, _json(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, _json(exc.read())
        except (urllib.error.URLError, OSError):
            return 0, None

    # -- invocations ------------------------------------------------------------------------------
    def _dispatch(self) -> None:
        s3 = self._endpoint.client("s3")
        sns = self._endpoint.client("sns")
        while not self._stop.is_set():
            with self._cv:
                while not self._stop.is_set() and not (
                    self._pending and (self._ready or self._start_error)
                ):
                    self._cv.wait(timeout=1)
                if self._stop.is_set():
                    return
                item = self._pending.popleft()
                self._in_flight += 1
                self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
                start_error = self._start_error
            try:
                self._run_one(item, start_error, s3, sns)
            except Exception:
                logger.exception("VL invocation %s broke; reporting it failed", item.inference_id)
                self._finish(
                    item,
                    500,
                    {"error": {"code": "INFERENCE_FAILED", "message": "internal error"}},
                    s3,
                    sns,
                )
            finally:
                with self._cv:
                    self._in_flight -= 1

    def _run_one(
        self, item: _Pending, start_error: dict[str, str] | None, s3: S3Client, sns: SNSClient
    ) -> None:
        if start_error is not None:
            self._finish(item, 500, {"error": start_error}, s3, sns)
            return
        if self._inference_errors.take():
            logger.warning("fault: the VL container answers %s with an error", item.inference_id)
            error = {"code": "ENGINE_ERROR", "message": "injected fault: the model server failed"}
            self._finish(item, 500, {"error": error}, s3, sns)
            return
        bucket, key = parse_s3_uri(item.input_location)
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        request = urllib.request.Request(  # noqa: S310 - loopback container URL
            f"{self._server_url}/invocations",
            data=body,
            headers={"Content-Type": item.content_type},
            method="POST",
        )
        timeout = names.VL_INVOCATION_TIMEOUT_SECONDS
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
                self._finish(item, response.status, response.read(), s3, sns)
        except urllib.error.HTTPError as exc:
            self._finish(item, exc.code, exc.read(), s3, sns)

    def _finish(self, item: _Pending, status: int, body: Any, s3: S3Client, sns: SNSClient) -> None:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        ok = status == 200
        location = item.output_location if ok else item.failure_location
        bucket, key = parse_s3_uri(location)
        s3.put_object(Bucket=bucket, Key=key, Body=payload, ContentType="application/json")
        notification: dict[str, Any] = {
            "awsRegion": self._resources.region,
            "eventTime": utc_now(),
            "receivedTime": item.received,
            "invocationStatus": "Completed" if ok else "Failed",
            "requestParameters": {
                "contentType": item.content_type,
                "endpointName": self._resources.vl_endpoint,
                "inputLocation": item.input_location,
            },
            "responseParameters": {"contentType": "application/json"},
            "inferenceId": item.inference_id,
            "eventVersion": "1.0",
            "eventSource": "aws:sagemaker",
            "eventName": "InferenceResult",
        }
        if ok:
            notification["responseParameters"]["outputLocation"] = location
        else:
            notification["failureReason"] = (
                f"ClientError: Received server error ({status}) from model. "
                "See the SageMaker Endpoint logs in your account for more information."
                if status >= 500
                else f"ClientError: Received client error ({status}) from model."
            )
            notification["responseParameters"]["failureLocation"] = location
        topic = Topic.SUCCESS if ok else Topic.ERROR
        sns.publish(TopicArn=self._resources.topic_arns[topic], Message=json.dumps(notification))


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
