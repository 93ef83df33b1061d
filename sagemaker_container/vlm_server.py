"""Start and supervise the vLLM server that runs the PaddleOCR-VL VLM inside the container.

PaddleOCR-VL sends one chat-completion request per layout region to this server; vLLM batches
the requests in flight (continuous batching), which is what keeps the GPU busy.
"""

from __future__ import annotations

import atexit
import importlib.util
import logging
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Final

logger = logging.getLogger(__name__)

_LOG_TAIL_LINES: Final = 40
_STOP_GRACE_S: Final = 30.0


class VlmServerError(RuntimeError):
    """The VLM server could not be started or kept running."""


class VlmServerState(StrEnum):
    STOPPED = "stopped"
    STARTING = "starting"
    READY = "ready"
    RESTARTING = "restarting"
    FAILED = "failed"


@dataclass(frozen=True)
class VlmServerSpec:
    """The `vllm serve` command line for PaddleOCR-VL, as the vLLM recipe and PaddleOCR document.

    Prefix caching and the multimodal processor cache are off: every region image is new, so
    hashing and caching them costs time and memory for no hit.
    """

    command: tuple[str, ...]
    model_dir: Path
    served_model_name: str
    port: int
    host: str = "127.0.0.1"
    gpu_memory_utilization: float = 0.5
    max_num_seqs: int = 128
    max_model_len: int = 16384
    max_num_batched_tokens: int = 16384
    chat_template: Path | None = None  # PaddleX's template for the model, as its genai_server uses
    extra_args: tuple[str, ...] = ()

    def argv(self) -> list[str]:
        template = ["--chat-template", str(self.chat_template)] if self.chat_template else []
        return [
            *self.command,
            "serve",
            str(self.model_dir),
            "--served-model-name",
            self.served_model_name,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--trust-remote-code",
            "--max-model-len",
            str(self.max_model_len),
            "--max-num-batched-tokens",
            str(self.max_num_batched_tokens),
            "--max-num-seqs",
            str(self.max_num_seqs),
            "--gpu-memory-utilization",
            str(self.gpu_memory_utilization),
            "--no-enable-prefix-caching",
            "--mm-processor-cache-gb",
            "0",
            *template,
            *self.extra_args,
        ]

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible API root PaddleOCR-VL's `vl_rec_server_url` expects."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def health_url(self) -> str:
        return f"http://{self.host}:{self.port}/health"


def paddlex_chat_template(model_name: str) -> Path | None:
    """The chat template PaddleX ships for `model_name`, found without importing PaddleX."""
    spec = importlib.util.find_spec("paddlex")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    template = root / "inference" / "genai" / "chat_templates" / f"{model_name}.jinja"
    return template if template.is_file() else None


def probe_health(url: str, *, timeout_s: float = 2.0) -> bool:
    """True when the server answers its health endpoint with 200."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:  # noqa: S310 - loopback URL we built
            return int(response.status) == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


class VlmServerSupervisor:
    """Runs the VLM server as a child process and keeps it healthy.

    Restart policy: the child is restarted when it exits or fails `unhealthy_after` health
    probes in a row, at most `max_restarts` times over the container's life; after that the
    supervisor reports FAILED, `/ping` answers 503 and SageMaker replaces the instance.
    """

    def __init__(
        self,
        spec: VlmServerSpec,
        *,
        startup_timeout_s: float,
        max_restarts: int,
        check_interval_s: float = 5.0,
        unhealthy_after: int = 3,
        probe: Callable[[str], bool] = probe_health,
    ) -> None:
        self.spec = spec
        self._startup_timeout_s = startup_timeout_s
        self._max_restarts = max_restarts
        self._check_interval_s = check_interval_s
        self._unhealthy_after = unhealthy_after
        self._probe = probe
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._process: subprocess.Popen[str] | None = None
        self._tail: deque[str] = deque(maxlen=_LOG_TAIL_LINES)
        self._state = VlmServerState.STOPPED
        self._restarts = 0
        self._monitor: threading.Thread | None = None

    @property
    def state(self) -> VlmServerState:
        return self._state

    @property
    def restarts(self) -> int:
        return self._restarts

    @property
    def ready(self) -> bool:
        return self._state is VlmServerState.READY

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None else None

    def output_tail(self) -> str:
        return "\n".join(self._tail)

    def start(self) -> None:
        """Start the server and block until it is healthy; raise VlmServerError otherwise."""
        self._state = VlmServerState.STARTING
        # The child runs in its own session; never leave it behind when this process exits.
        atexit.register(self._terminate)
        try:
            self._spawn_and_wait()
        except VlmServerError:
            self._state = VlmServerState.FAILED
            self._terminate()
            raise
        self._state = VlmServerState.READY
        self._monitor = threading.Thread(target=self._watch, name="vlm-supervisor", daemon=True)
        self._monitor.start()

    def stop(self) -> None:
        self._stopping.set()
        self._terminate()
        atexit.unregister(self._terminate)
        if self._monitor is not None and self._monitor is not threading.current_thread():
            self._monitor.join(timeout=_STOP_GRACE_S)
        self._state = VlmServerState.STOPPED

    def _spawn_and_wait(self) -> None:
        argv = self.spec.argv()
        logger.info("starting VLM server: %s", " ".join(argv))
        try:
            process = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                bufsize=1,
                start_new_session=True,  # its own process group: stop() ends its workers too
            )
        except OSError as exc:
            raise VlmServerError(f"cannot start the VLM server {argv[0]!r}: {exc}") from exc
        with self._lock:
            self._process = process
        if process.stdout is None:  # never: stdout=PIPE above
            raise VlmServerError("the VLM server's output is not piped")
        threading.Thread(
            target=self._pump, args=(process.stdout,), name="vlm-server-log", daemon=True
        ).start()
        deadline = time.monotonic() + self._startup_timeout_s
        while time.monotonic() < deadline:
            if self._stopping.is_set():
                raise VlmServerError("VLM server start interrupted by shutdown")
            code = process.poll()
            if code is not None:
                raise VlmServerError(
                    f"VLM server exited with code {code} before becoming healthy; "
                    f"last output:\n{self.output_tail()}"
                )
            if self._probe(self.spec.health_url):
                logger.info("VLM server healthy at %s (pid %d)", self.spec.base_url, process.pid)
                return
            time.sleep(0.5)
        raise VlmServerError(
            f"VLM server not healthy after {self._startup_timeout_s:.0f} s; "
            f"last output:\n{self.output_tail()}"
        )

    def _pump(self, stream: IO[str]) -> None:
        """Forward the child's output to the container log and keep a tail for error reports."""
        for line in stream:
            text = line.rstrip()
            self._tail.append(text)
            logger.info("[vlm-server] %s", text)

    def _watch(self) -> None:
        failures = 0
        while not self._stopping.wait(self._check_interval_s):
            process = self._process
            exited = process is None or process.poll() is not None
            if not exited and self._probe(self.spec.health_url):
                failures = 0
                continue
            failures += 1
            if not exited and failures < self._unhealthy_after:
                continue
            reason = (
                f"exited with code {process.poll() if process else None}"
                if exited
                else f"failed {failures} health checks"
            )
            if not self._restart(reason):
                return
            failures = 0

    def _restart(self, reason: str) -> bool:
        if self._stopping.is_set():
            return False
        if self._restarts >= self._max_restarts:
            logger.error(
                "VLM server %s; restart budget (%d) spent, reporting unhealthy",
                reason,
                self._max_restarts,
            )
            self._state = VlmServerState.FAILED
            self._terminate()
            return False
        self._restarts += 1
        logger.warning(
            "VLM server %s; restart %d of %d", reason, self._restarts, self._max_restarts
        )
        self._state = VlmServerState.RESTARTING
        self._terminate()
        try:
            self._spawn_and_wait()
        except VlmServerError as exc:
            logger.error("VLM server restart failed: %s", exc)
            return self._restart("did not come back")
        self._state = VlmServerState.READY
        return True

    def _terminate(self) -> None:
        with self._lock:
            process = self._process
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=_STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=_STOP_GRACE_S)
        except ProcessLookupError:
            pass
