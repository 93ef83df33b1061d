"""Fixtures shared by every test area: fake AWS credentials, a Lambda context, model dirs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT

# The processor's emulated account and warm engines, for the processor's and the engines' tests.
pytest_plugins = ["tests.processor_account"]


@pytest.fixture(autouse=True)
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Point boto3 at fake credentials so no test can reach a real account."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SECURITY_TOKEN", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "PaddleIdpTest")
    monkeypatch.setenv("POWERTOOLS_DEV", "false")


@dataclass
class FakeLambdaContext:
    """The attributes Powertools and our handlers read from a Lambda context."""

    function_name: str = "test-function"
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:test-function"
    aws_request_id: str = "00000000-0000-0000-0000-000000000000"
    log_group_name: str = "/aws/lambda/test-function"
    log_stream_name: str = "2026/11/21/[$LATEST]0"
    remaining_ms: int = 60_000

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


@pytest.fixture
def lambda_context() -> FakeLambdaContext:
    return FakeLambdaContext()


@pytest.fixture(scope="session")
def models_dir() -> Path:
    """The offline PP-OCRv5 weights unpacked by `make setup` (devkit.offline_weights)."""
    path = Path(os.environ.get("IDP_MODELS_DIR", REPO_ROOT / ".models"))
    if not (path / "PP-OCRv5_mobile_rec" / "inference.pdiparams").is_file():
        pytest.fail(f"offline weights missing under {path}: run `make setup`")
    return path
