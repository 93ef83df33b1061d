"""A real `idp local up` for the CLI tests: started once per session, stopped with SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.paths import REPO_ROOT

STARTUP_TIMEOUT_S = 120


@dataclass(frozen=True)
class LocalUp:
    """A running `idp local up`, as its --json line describes it."""

    endpoint_url: str
    names: dict[str, str]
    process: subprocess.Popen[str]
    log: Path

    def _session(self) -> boto3.Session:
        """A user's session on the emulator, with its fixed credentials."""
        return boto3.Session(
            region_name="us-east-1", aws_access_key_id="local", aws_secret_access_key="local"
        )

    def client(self, service: str) -> Any:
        return self._session().client(service, endpoint_url=self.endpoint_url)  # type: ignore[call-overload]

    def jobs_table(self) -> Any:
        dynamodb = self._session().resource("dynamodb", endpoint_url=self.endpoint_url)
        return dynamodb.Table(self.names["jobs_table"])


@pytest.fixture(scope="session")
def local_up(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Iterator[LocalUp]:
    log = tmp_path_factory.mktemp("local-up") / "local-up.log"
    env = {
        **os.environ,
        "IDP_MODELS_DIR": str(models_dir),
        "PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK": "True",
    }
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "devkit.cli.main", "local", "up", "--vl-substitute", "--json"],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    try:
        assert process.stdout is not None
        line = _first_line(process, STARTUP_TIMEOUT_S)
        names = json.loads(line)
        yield LocalUp(endpoint_url=names["endpoint_url"], names=names, process=process, log=log)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _first_line(process: subprocess.Popen[str], timeout_s: float) -> str:
    """The first stdout line, or a failure with the exit status if the process dies first."""
    import selectors

    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=timeout_s):
            pytest.fail(f"`idp local up` printed nothing in {timeout_s} s")
    line = process.stdout.readline()
    if not line:
        pytest.fail(f"`idp local up` exited with {process.wait()} before it was up")
    return line
