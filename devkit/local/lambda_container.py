"""A function's container image run the way Lambda runs it, as a local execution environment.

The image's own entrypoint and CMD handler start; its runtime interface client polls the Lambda
Runtime API (2018-06-01) that this module serves on loopback. That server is a FAKE of the Lambda
service, the one boundary this machine cannot reach; everything inside the container is the real
image. The container gets what a Lambda execution environment gives: the function's environment,
a read-only root file system with a writable /tmp of the function's ephemeral size, its memory
limit, a non-root user, and the standard AWS_LAMBDA_* variables.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

from devkit.local.emulator import ACCOUNT_ID
from devkit.local.functions import Invocation

logger = logging.getLogger("devkit.local.container")

_API_PREFIX: Final = "/2018-06-01/runtime"
_RESULT_PATH: Final = re.compile(
    rf"^{_API_PREFIX}/invocation/(?P<id>[^/]+)/(?P<kind>response|error)$"
)
# Lambda runs functions as this unprivileged user (sbx_user1051).
LAMBDA_USER: Final = "993:990"
_STOP_GRACE_SECONDS: Final = 2


class DockerUnavailable(RuntimeError):
    """No Docker engine answers: an image cannot be run here."""


def require_docker() -> str:
    """The docker CLI's path, once `docker info` shows a running engine."""
    docker = shutil.which("docker")
    if docker is None:
        raise DockerUnavailable("the docker CLI is not installed")
    probe = subprocess.run([docker, "info"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        raise DockerUnavailable(f"no Docker engine answers `docker info`: {probe.stderr.strip()}")
    return docker


@dataclass(frozen=True)
class ContainerFunction:
    """What Lambda knows of an image function: the image, its CMD and its configuration."""

    image: str
    handler: str  # the image CMD (the stack sets it too)
    function_name: str
    memory_mb: int
    ephemeral_storage_mb: int
    region: str


@dataclass
class _Pending:
    event: Any
    request_id: str
    deadline: float
    done: threading.Event
    result: tuple[str, Any] | None = None


class RuntimeApi:
    """The Lambda Runtime API for one execution environment, on 127.0.0.1 and a free port."""

    def __init__(self, function: ContainerFunction) -> None:
        self._function = function
        self._next: queue.Queue[_Pending] = queue.Queue()
        self._running: dict[str, _Pending] = {}
        self._lock = threading.Lock()
        self.init_error: str | None = None
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                api._on_get(self)

            def do_POST(self) -> None:
                api._on_post(self)

            def log_message(self, format: str, *args: object) -> None:
                logger.debug(format, *args)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{host!s}:{port}"

    def submit(self, event: Any, *, request_id: str, timeout_s: float) -> _Pending:
        pending = _Pending(event, request_id, time.time() + timeout_s, threading.Event())
        self._next.put(pending)
        return pending

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _on_get(self, request: BaseHTTPRequestHandler) -> None:
        if request.path != f"{_API_PREFIX}/invocation/next":
            _reply(request, 404, {"errorMessage": f"unknown path {request.path}"})
            return
        pending = self._next.get()  # the runtime client long-polls here between invocations
        with self._lock:
            self._running[pending.request_id] = pending
        function = self._function
        body = json.dumps(pending.event).encode()
        request.send_response(200)
        for key, value in {
            "Lambda-Runtime-Aws-Request-Id": pending.request_id,
            "Lambda-Runtime-Deadline-Ms": str(int(pending.deadline * 1000)),
            "Lambda-Runtime-Invoked-Function-Arn": (
                f"arn:aws:lambda:{function.region}:{ACCOUNT_ID}:function:{function.function_name}"
            ),
            "Lambda-Runtime-Trace-Id": f"Root=1-{uuid.uuid4().hex[:8]}-{uuid.uuid4().hex[:24]}",
            "Content-Type": "application/json",
            "Content-Length": str(len(body)),
        }.items():
            request.send_header(key, value)
        request.end_headers()
        request.wfile.write(body)

    def _on_post(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else b""
        if request.path == f"{_API_PREFIX}/init/error":
            self.init_error = body.decode(errors="replace")
            _reply(request, 202, {"status": "OK"})
            return
        match = _RESULT_PATH.match(request.path)
        if match is None:
            _reply(request, 404, {"errorMessage": f"unknown path {request.path}"})
            return
        with self._lock:
            pending = self._running.pop(match["id"], None)
        if pending is None:
            _reply(request, 400, {"errorMessage": f"no invocation {match['id']} in flight"})
            return
        payload = json.loads(body) if body else None
        pending.result = (match["kind"], payload)
        pending.done.set()
        _reply(request, 202, {"status": "OK"})


def _reply(request: BaseHTTPRequestHandler, status: int, payload: Mapping[str, Any]) -> None:
    body = json.dumps(payload).encode()
    request.send_response(status)
    request.send_header("Content-Type", "application/json")
    request.send_header("Content-Length", str(len(body)))
    request.end_headers()
    request.wfile.write(body)


class ContainerEnvironment:
    """One execution environment: one container of the image and its Runtime API."""

    def __init__(self, function: ContainerFunction, env: Mapping[str, str]) -> None:
        self._docker = require_docker()
        self.function = function
        self.api = RuntimeApi(function)
        self.name = f"idp-{function.function_name[:40]}-{uuid.uuid4().hex[:8]}".lower()
        lambda_env = {
            **env,
            "AWS_LAMBDA_RUNTIME_API": self.api.address,
            "AWS_LAMBDA_FUNCTION_NAME": function.function_name,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(function.memory_mb),
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{function.function_name}",
            "AWS_LAMBDA_LOG_STREAM_NAME": self.name,
            "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
            "AWS_EXECUTION_ENV": "AWS_Lambda_Image",
            "AWS_REGION": function.region,
            "AWS_DEFAULT_REGION": function.region,
            "TZ": ":UTC",
        }
        command = [
            self._docker,
            "run",
            "--rm",
            "--name",
            self.name,
            "--network",
            "host",  # the emulator and the Runtime API listen on the host's loopback
            "--read-only",
            "--tmpfs",
            f"/tmp:rw,exec,size={function.ephemeral_storage_mb}m",  # noqa: S108 - Lambda's /tmp
            "--memory",
            f"{function.memory_mb}m",
            "--user",
            LAMBDA_USER,
        ]
        for key, value in lambda_env.items():
            command += ["--env", f"{key}={value}"]
        command += [function.image, function.handler]
        # The container's output is the function's log (CloudWatch on AWS): stderr here.
        self.process = subprocess.Popen(command, stdout=None, stderr=None)
        self.invocations = 0

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def invoke(self, event: Any, timeout_s: float, request_id: str) -> Invocation:
        cold = self.invocations == 0
        self.invocations += 1
        started = time.monotonic()
        pending = self.api.submit(event, request_id=request_id, timeout_s=timeout_s)
        deadline = started + timeout_s
        while not pending.done.wait(0.2):
            if not self.alive:
                return Invocation.crashed(self._exit_message(), started=started, cold_start=cold)
            if time.monotonic() > deadline:
                self.kill()
                return Invocation.timed_out(timeout_s, started=started, cold_start=cold)
        elapsed = time.monotonic() - started
        if pending.result is None:  # done is set only once the result is in
            raise RuntimeError(f"invocation {request_id} ended without a result")
        kind, payload = pending.result
        if kind == "response":
            return Invocation("ok", payload=payload, duration_s=elapsed, cold_start=cold)
        error = payload if isinstance(payload, dict) else {}
        return Invocation(
            "error",
            error_type=str(error.get("errorType", "Unhandled")),
            error_message=str(error.get("errorMessage", payload)),
            duration_s=elapsed,
            cold_start=cold,
        )

    def crash(self) -> None:
        if self.alive:
            subprocess.run(
                [self._docker, "kill", self.name], capture_output=True, check=False, timeout=30
            )

    def _exit_message(self) -> str:
        message = f"container exited with code {self.process.returncode}"
        if self.api.init_error:
            message += f"; init error: {self.api.init_error}"
        return message

    def kill(self) -> None:
        self.crash()
        try:
            self.process.wait(timeout=_STOP_GRACE_SECONDS + 10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.api.stop()
