"""Helpers for the VL container tests: free ports, HTTP calls, the server process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3

from tests.paths import REPO_ROOT

FAKE_VLM_SERVER = Path(__file__).with_name("fake_vlm_server.py")
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}


def free_tcp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class HttpReply:
    status: int
    body: dict[str, Any]


def http(
    method: str,
    url: str,
    *,
    body: bytes | None = None,
    content_type: str | None = None,
    timeout: float = 120.0,
) -> HttpReply:
    request = urllib.request.Request(url, data=body, method=method)
    if content_type is not None:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return HttpReply(int(response.status), json.loads(response.read() or b"{}"))
    except urllib.error.HTTPError as exc:
        return HttpReply(exc.code, json.loads(exc.read() or b"{}"))


@dataclass
class MotoS3:
    endpoint_url: str

    def client(self) -> Any:
        return boto3.client("s3", endpoint_url=self.endpoint_url, region_name="us-east-1")


class ServerProcess:
    """The real `serve` entry point in a subprocess on a free localhost port."""

    def __init__(self, env: Mapping[str, str], log_path: Path) -> None:
        self.port = free_tcp_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        full_env = {
            **os.environ,
            **FAKE_CREDENTIALS,
            "VL_HOST": "127.0.0.1",
            "VL_PORT": str(self.port),
            "PYTHONPATH": str(REPO_ROOT),
            **env,
        }
        self._log = log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, str(REPO_ROOT / "sagemaker_container" / "serve"), "serve"],
            env=full_env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=REPO_ROOT,
        )

    def ping(self) -> HttpReply:
        return http("GET", f"{self.url}/ping", timeout=5)

    def wait_listening(self, timeout_s: float = 60.0) -> HttpReply:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.check_alive()
            try:
                return self.ping()
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.1)
        raise AssertionError(f"server did not listen within {timeout_s} s:\n{self.log()}")

    def wait_state(self, states: set[str], timeout_s: float = 180.0) -> HttpReply:
        deadline = time.monotonic() + timeout_s
        reply = self.wait_listening()
        while reply.body.get("state") not in states:
            if time.monotonic() > deadline:
                raise AssertionError(f"/ping still {reply.body} after {timeout_s} s:\n{self.log()}")
            time.sleep(0.25)
            self.check_alive()
            reply = self.ping()
        return reply

    def invoke(self, manifest: Mapping[str, Any] | bytes, **kwargs: Any) -> HttpReply:
        body = manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode()
        kwargs.setdefault("content_type", "application/json")
        return http("POST", f"{self.url}/invocations", body=body, **kwargs)

    def check_alive(self) -> None:
        if self.process.poll() is not None:
            raise AssertionError(f"server exited with {self.process.returncode}:\n{self.log()}")

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-5000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        self._log.close()
