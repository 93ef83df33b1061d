"""The pinned CDK CLI (node_modules, aws-cdk 2.1148.x) synthesizes the app offline, no Docker."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.local_runs import run_command
from tests.paths import REPO_ROOT

CDK = REPO_ROOT / "node_modules" / ".bin" / "cdk"


def test_pinned_cli_synthesizes_the_stack_without_docker(tmp_path: Path) -> None:
    # GIVEN the CLI installed by `make setup`, with any Docker call pointed at nothing
    if not CDK.exists():
        pytest.fail("node_modules/.bin/cdk is missing: run `make setup`")
    version = json.loads((REPO_ROOT / "node_modules" / "aws-cdk" / "package.json").read_text())
    assert version["version"].startswith("2.1148.")
    env = {
        **os.environ,
        "CDK_DOCKER": str(tmp_path / "no-docker-here"),  # the binary CDK would run for Docker
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
        "CDK_DISABLE_VERSION_CHECK": "1",
    }

    # WHEN `cdk synth` runs with the repository's cdk.json
    synth = [str(CDK), "synth", "--quiet", "--output", str(tmp_path / "cdk.out")]
    done = run_command(synth, cwd=REPO_ROOT, env=env, timeout=300)

    # THEN it succeeds and writes the template, with the image assets only staged
    assert done.returncode == 0, done.stderr[-3000:]
    template = json.loads((tmp_path / "cdk.out" / "PaddleIdpStack.template.json").read_text())
    assert "AWS::SageMaker::Endpoint" in {r["Type"] for r in template["Resources"].values()}
    assets = json.loads((tmp_path / "cdk.out" / "PaddleIdpStack.assets.json").read_text())
    assert len(assets["dockerImages"]) == 3  # the processor, the Office converter, the VL image
