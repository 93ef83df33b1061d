"""Fixtures for the VL container tests: free ports, a moto S3 server, the fake VLM command."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from moto.server import ThreadedMotoServer

from .helpers import FAKE_CREDENTIALS, FAKE_VLM_SERVER, MotoS3, free_tcp_port


@pytest.fixture
def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    return free_tcp_port()


@pytest.fixture
def fake_vlm_command() -> tuple[str, ...]:
    """The command that runs the FAKE vLLM server (fake_vlm_server.py) in place of `vllm`."""
    return (sys.executable, str(FAKE_VLM_SERVER))


@pytest.fixture(scope="module")
def moto_s3() -> Iterator[MotoS3]:
    """moto in server mode, so a separate server process can reach it over HTTP."""
    previous = {key: os.environ.get(key) for key in FAKE_CREDENTIALS}
    os.environ.update(FAKE_CREDENTIALS)
    port = free_tcp_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield MotoS3(endpoint_url=f"http://127.0.0.1:{port}")
    finally:
        server.stop()
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
