"""Lambda functions emulated as worker processes: one process per execution environment.

Each environment imports the real handler module with the function's own environment, keeps
its globals (warm engines, clients) across invocations like a warm Lambda container, and is
killed on timeout or replaced after a crash, so faults look as they do on AWS.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import queue
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Literal, Protocol

_SPAWN = multiprocessing.get_context("spawn")


@dataclass(frozen=True)
class Invocation:
    """What happened to one invocation."""

    outcome: Literal["ok", "error", "timeout", "crash"]
    payload: Any = None  # handler's return value when ok
    error_type: str | None = None
    error_message: str | None = None
    duration_s: float = 0.0
    cold_start: bool = False

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    @classmethod
    def crashed(cls, message: str, *, started: float, cold_start: bool) -> Invocation:
        """The environment died mid-invocation (`started`: time.monotonic() at the start)."""
        return cls(
            "crash",
            error_type="Runtime.ExitError",
            error_message=message,
            duration_s=time.monotonic() - started,
            cold_start=cold_start,
        )

    @classmethod
    def timed_out(cls, timeout_s: float, *, started: float, cold_start: bool) -> Invocation:
        return cls(
            "timeout",
            error_type="TimeoutError",
            error_message=f"Task timed out after {timeout_s:.0f} seconds",
            duration_s=time.monotonic() - started,
            cold_start=cold_start,
        )


class LambdaContext:
    """The attributes of a Lambda context object our handlers and Powertools read."""

    def __init__(
        self, function_name: str, memory_mb: int, deadline: float, request_id: str
    ) -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = memory_mb
        self.invoked_function_arn = (
            f"arn:aws:lambda:us-east-1:123456789012:function:{function_name}"
        )
        self.aws_request_id = request_id
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = "local"
        self._deadline = deadline

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.time()) * 1000))


# What a child keeps from the parent's environment; everything else comes from the function's
# own configuration, as in a Lambda execution environment.
_INHERITED_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "PYTHONPATH", "VIRTUAL_ENV", "SSL_CERT_FILE")


Reply = tuple[Any, ...]  # ("ok", payload) or ("error", type name, message)


def load_handler(handler_path: str, env: dict[str, str]) -> tuple[Callable[..., Any], str]:
    """In a worker: the process made an execution environment of the function (its own
    environment variables only, its output to stderr), and the handler imported once; with the
    function's name."""
    # A function's output is its log (CloudWatch on AWS); locally it goes to stderr, so the
    # CLI's stdout carries only what the CLI itself prints (e.g. `--json`).
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    inherited = {key: os.environ[key] for key in _INHERITED_ENV if key in os.environ}
    os.environ.clear()
    os.environ.update({**inherited, **env})
    module_name, _, attr = handler_path.rpartition(".")
    handler = getattr(importlib.import_module(module_name), attr)
    return handler, env.get("IDP_LOCAL_FUNCTION_NAME", module_name)


def call_handler(handler: Callable[..., Any], event: Any, context: LambdaContext) -> Reply:
    """One invocation's reply: the handler's return value, or its exception as Lambda reports an
    Unhandled error."""
    try:
        return ("ok", handler(event, context))
    except Exception as exc:  # noqa: BLE001 - reported to the caller like Lambda's Unhandled
        traceback.print_exc()
        return ("error", type(exc).__name__, str(exc))


def _serve(conn: Connection, handler_path: str, env: dict[str, str], memory_mb: int) -> None:
    """Child process body: import the handler once, then answer invocations until closed."""
    handler, function_name = load_handler(handler_path, env)
    while True:
        try:
            event, deadline, request_id = conn.recv()
        except EOFError:
            return
        context = LambdaContext(function_name, memory_mb, deadline, request_id)
        conn.send(call_handler(handler, event, context))


class ExecutionEnvironment(Protocol):
    """One execution environment of a function: a worker process, or a container of its image
    (devkit.local.lambda_container)."""

    @property
    def alive(self) -> bool: ...

    def invoke(self, event: Any, timeout_s: float, request_id: str) -> Invocation: ...

    def crash(self) -> None:
        """End it abruptly, mid-invocation (a fault-injection seam)."""
        ...

    def kill(self) -> None: ...


EnvironmentFactory = Callable[[dict[str, str]], ExecutionEnvironment]


class WorkerEnvironment:
    """One execution environment (a spawned worker process).

    The worker runs `target(conn, *args)` (by default the handler's loop, `_serve`); a
    subclass with a worker of its own that sends more than the reply overrides `_reply`."""

    def __init__(
        self,
        handler: str,
        env: dict[str, str],
        memory_mb: int,
        *,
        target: Callable[..., None] = _serve,
        args: tuple[Any, ...] | None = None,
    ) -> None:
        parent, child = _SPAWN.Pipe()
        self._conn = parent
        worker_args = args if args is not None else (handler, env, memory_mb)
        self.process = _SPAWN.Process(target=target, args=(child, *worker_args), daemon=True)
        self.process.start()
        child.close()
        self.invocations = 0

    def _reply(self, event: Any, message: Any) -> Reply:
        """The reply in what the worker sent for `event` (None: the worker died first)."""
        return tuple(message) if message is not None else ()

    def invoke(self, event: Any, timeout_s: float, request_id: str) -> Invocation:
        cold = self.invocations == 0
        self.invocations += 1
        started = time.monotonic()
        self._conn.send((event, time.time() + timeout_s, request_id))
        if not self._conn.poll(timeout_s):
            self.kill()
            return Invocation.timed_out(timeout_s, started=started, cold_start=cold)
        try:
            reply = self._reply(event, self._conn.recv())
        except (EOFError, ConnectionResetError):
            self._reply(event, None)
            self.process.join(timeout=5)
            return Invocation.crashed(
                f"worker exited with code {self.process.exitcode}", started=started, cold_start=cold
            )
        elapsed = time.monotonic() - started
        if reply[0] == "ok":
            return Invocation("ok", payload=reply[1], duration_s=elapsed, cold_start=cold)
        return Invocation(
            "error",
            error_type=reply[1],
            error_message=reply[2],
            duration_s=elapsed,
            cold_start=cold,
        )

    @property
    def alive(self) -> bool:
        return self.process.is_alive()

    def crash(self) -> None:
        if self.process.is_alive():
            self.process.kill()

    def kill(self) -> None:
        self.crash()
        self.process.join(timeout=10)
        self._conn.close()


class LocalFunction:
    """A function with up to `concurrency` warm environments, started on demand (cold starts)."""

    def __init__(
        self,
        *,
        name: str,
        handler: str,
        env: dict[str, str],
        memory_mb: int,
        timeout_s: float,
        concurrency: int = 1,
        environment_factory: EnvironmentFactory | None = None,
    ) -> None:
        self.name = name
        self.handler = handler
        # Lambda sets AWS_LAMBDA_FUNCTION_NAME in every environment (the processor reads it to
        # invoke itself for a long document's chunks).
        self.env = {**env, "IDP_LOCAL_FUNCTION_NAME": name, "AWS_LAMBDA_FUNCTION_NAME": name}
        self.memory_mb = memory_mb
        self.timeout_s = timeout_s
        self._new_environment = environment_factory or (
            lambda env: WorkerEnvironment(handler, env, memory_mb)
        )
        self._idle: queue.LifoQueue[ExecutionEnvironment] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(concurrency)
        self._lock = threading.Lock()
        self._all: list[ExecutionEnvironment] = []
        self._in_flight: dict[int, ExecutionEnvironment] = {}
        self._by_request: dict[str, ExecutionEnvironment] = {}

    def invoke(self, event: Any, *, request_id: str | None = None) -> Invocation:
        """Run one invocation; retries of an async event pass the same `request_id`, as on AWS."""
        request_id = request_id or str(uuid.uuid4())
        with self._slots:
            environment = self._take()
            self._in_flight[threading.get_ident()] = environment
            self._by_request[request_id] = environment
            try:
                result = environment.invoke(event, self.timeout_s, request_id)
            finally:
                self._in_flight.pop(threading.get_ident(), None)
                self._by_request.pop(request_id, None)
            if environment.alive and result.outcome in ("ok", "error"):
                self._idle.put(environment)
            else:
                environment.kill()
                with self._lock:
                    self._all.remove(environment)
            return result

    def crash_request(self, request_id: str) -> bool:
        """Kill the environment running `request_id`, if any (a fault-injection seam)."""
        environment = self._by_request.get(request_id)
        if environment is None:
            return False
        environment.crash()
        return True

    def _take(self) -> ExecutionEnvironment:
        while True:
            try:
                environment = self._idle.get_nowait()
            except queue.Empty:
                environment = self._new_environment(self.env)
                with self._lock:
                    self._all.append(environment)
                return environment
            if environment.alive:
                return environment
            with self._lock:
                self._all.remove(environment)

    def shutdown(self) -> None:
        with self._lock:
            environments, self._all = self._all, []
        for environment in environments:
            environment.kill()
