"""The vLLM server supervisor: command line, start-up, crash reporting and restart policy.

vLLM and a GPU cannot run here, so the child is FAKE (fake_vlm_server.py) with vLLM's command
line and health endpoint; what is tested is the supervisor's real process handling.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sagemaker_container.vlm_server import (
    VlmServerError,
    VlmServerSpec,
    VlmServerState,
    VlmServerSupervisor,
    paddlex_chat_template,
    probe_health,
)


def spec_for(tmp_path: Path, command: tuple[str, ...], port: int) -> VlmServerSpec:
    return VlmServerSpec(
        command=command,
        model_dir=tmp_path / "PaddleOCR-VL-1.6-0.9B",
        served_model_name="PaddleOCR-VL-1.6-0.9B",
        port=port,
        chat_template=paddlex_chat_template("PaddleOCR-VL-1.6-0.9B"),
    )


def wait_for(condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)


@pytest.fixture
def fake_server(
    tmp_path: Path, fake_vlm_command: tuple[str, ...], free_port: int
) -> Iterator[Callable[..., VlmServerSupervisor]]:
    """`fake_server(**options)`: a supervisor of the FAKE server; every one is stopped after
    the test."""
    made: list[VlmServerSupervisor] = []

    def supervise(**options: Any) -> VlmServerSupervisor:
        made.append(VlmServerSupervisor(spec_for(tmp_path, fake_vlm_command, free_port), **options))
        return made[-1]

    yield supervise
    for supervisor in made:
        supervisor.stop()


def test_command_line_follows_the_documented_vllm_recipe(tmp_path: Path, free_port: int) -> None:
    # GIVEN the spec the container builds for PaddleOCR-VL 1.6
    spec = spec_for(tmp_path, ("vllm",), free_port)
    # WHEN it is turned into a command line
    argv = spec.argv()
    # THEN it is `vllm serve <dir>` with the flags the vLLM recipe and PaddleX's server use
    assert argv[:3] == ["vllm", "serve", str(tmp_path / "PaddleOCR-VL-1.6-0.9B")]
    joined = " ".join(argv)
    assert "--served-model-name PaddleOCR-VL-1.6-0.9B" in joined
    assert "--trust-remote-code" in argv
    assert "--no-enable-prefix-caching" in argv
    assert "--mm-processor-cache-gb 0" in joined
    assert "--max-num-batched-tokens 16384" in joined
    assert f"--port {spec.port}" in joined
    assert "--host 127.0.0.1" in joined
    template = argv[argv.index("--chat-template") + 1]
    assert template.endswith("PaddleOCR-VL-1.6-0.9B.jinja")
    assert Path(template).is_file()
    assert spec.base_url == f"http://127.0.0.1:{spec.port}/v1"


def test_start_waits_until_healthy_and_stop_ends_the_process(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_server: Callable[..., VlmServerSupervisor],
    fake_vlm_command: tuple[str, ...],
) -> None:
    # GIVEN a supervisor for a server that starts cleanly
    argv_file = tmp_path / "argv.jsonl"
    monkeypatch.setenv("FAKE_VLM_ARGV_FILE", str(argv_file))
    supervisor = fake_server(startup_timeout_s=30, max_restarts=1)
    spec = supervisor.spec
    # WHEN it starts
    supervisor.start()
    # THEN it returns only once the server answers /health, with the spec's command line
    assert supervisor.ready
    assert probe_health(spec.health_url)
    assert json.loads(argv_file.read_text().splitlines()[0]) == spec.argv()[len(fake_vlm_command) :]
    # AND stop() ends it
    supervisor.stop()
    assert supervisor.state is VlmServerState.STOPPED
    assert not probe_health(spec.health_url, timeout_s=0.5)


def test_a_server_that_dies_at_start_up_is_reported_with_its_output(
    monkeypatch: pytest.MonkeyPatch, fake_server: Callable[..., VlmServerSupervisor]
) -> None:
    # GIVEN a server that cannot load its model
    monkeypatch.setenv("FAKE_VLM_EXIT_CODE", "3")
    supervisor = fake_server(startup_timeout_s=30, max_restarts=1)
    # WHEN the supervisor starts it
    with pytest.raises(VlmServerError) as raised:
        supervisor.start()
    # THEN the error carries the exit code and the server's own last words
    assert "exited with code 3" in str(raised.value)
    assert "cannot load model" in str(raised.value)
    assert supervisor.state is VlmServerState.FAILED


def test_a_server_that_never_gets_healthy_times_out(tmp_path: Path, free_port: int) -> None:
    # GIVEN a "server" that runs but never answers
    silent = (sys.executable, "-c", "import time; time.sleep(60)")
    supervisor = VlmServerSupervisor(
        spec_for(tmp_path, silent, free_port), startup_timeout_s=1.5, max_restarts=0
    )
    # WHEN it is started THEN start() gives up after the start-up timeout and ends the child
    with pytest.raises(VlmServerError, match="not healthy after"):
        supervisor.start()
    assert supervisor.state is VlmServerState.FAILED


def test_a_crashed_server_is_restarted_until_the_budget_is_spent(
    monkeypatch: pytest.MonkeyPatch, fake_server: Callable[..., VlmServerSupervisor]
) -> None:
    # GIVEN a server that crashes 1.5 s after each start, and a budget of one restart
    monkeypatch.setenv("FAKE_VLM_EXIT_AFTER", "1.5")
    supervisor = fake_server(startup_timeout_s=30, max_restarts=1, check_interval_s=0.1)
    supervisor.start()
    first_pid = supervisor.pid
    # WHEN it crashes the first time
    wait_for(lambda: supervisor.restarts == 1 and supervisor.ready)
    # THEN it is running again as a new process
    assert supervisor.pid != first_pid
    # AND WHEN it crashes again, THEN the supervisor reports FAILED instead of looping
    wait_for(lambda: supervisor.state is VlmServerState.FAILED)
    assert not supervisor.ready
