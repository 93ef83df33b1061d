"""The VL image's CPU twin constructs PaddleOCR-VL with the vllm-server backend, up to the weights.

The twin is sagemaker_container/Dockerfile built on a Debian stand-in base with CPU paddlepaddle
(images/README.md): the same pip steps, OpenCV build and system libraries as the GPU image. Its
`serve` entry point starts against a FAKE VLM server (tests/sagemaker_container/fake_vlm_server.py:
no GPU, no vLLM here) with placeholder model dirs, so PaddleX gets as far as reading the layout
model's weights. A dependency error (the failure a wrong OpenCV build causes) fails the test.
The placeholders are pinned by a manifest mounted over the image's own; without it, the server
refuses them, naming each model.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from idp.document.ocr.models.archives import tree_sha256
from idp.document.ocr.models.catalogue import VL_DEFAULT_PIPELINE_VERSION, VL_PIPELINE_MODELS
from idp.document.ocr.models.manifest import ModelManifest, ModelPin
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.image

FAKE_VLM_SERVER = REPO_ROOT / "tests" / "sagemaker_container" / "fake_vlm_server.py"
START_TIMEOUT_S = 300.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _placeholder_weights(root: Path) -> Path:
    """Model dirs that pass the server's weight lookup but hold no real weights."""
    layout, vlm = VL_PIPELINE_MODELS[VL_DEFAULT_PIPELINE_VERSION]
    layout_dir = root / layout
    layout_dir.mkdir(parents=True)
    (layout_dir / "inference.yml").write_text(f"Global:\n  model_name: {layout}\n")
    (layout_dir / "inference.json").write_text("{}")
    (layout_dir / "inference.pdiparams").write_bytes(b"\0" * 64)
    vlm_dir = root / vlm
    vlm_dir.mkdir()
    (vlm_dir / "config.json").write_text(
        '{"architectures": ["PaddleOCRVLForConditionalGeneration"]}'
    )
    (vlm_dir / "model.safetensors").write_bytes(b"\0" * 16)
    root.chmod(0o755)
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


@pytest.fixture
def fake_vlm_server(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(FAKE_VLM_SERVER), "serve", str(tmp_path), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.kill()
        process.wait(timeout=10)


def _ping(port: int) -> tuple[int, dict[str, Any]] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/ping", timeout=5) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
    except OSError:
        return None  # not listening yet


# Where the VL image's code keeps the model manifest (sagemaker_container/Dockerfile copies
# idp/document to /opt/program/idp/document).
IMAGE_MANIFEST = "/opt/program/idp/document/ocr/models/manifest.json"


def _manifest_pinning(weights: Path, out: Path) -> Path:
    """The repository's manifest with the files of each placeholder model dir pinned, as an
    operator's `idp models import-dir` and a rebuild would leave it."""
    pins = ModelManifest.load().with_pins(
        ModelPin(path.name, "test: placeholder weights", None, tree_sha256=tree_sha256(path))
        for path in sorted(weights.iterdir())
    )
    pins.write(out)
    out.chmod(0o644)
    return out


def _start(
    vl_cpu_image: str, fake_vlm_server: str, weights: Path, *, manifest: Path | None
) -> tuple[tuple[int, dict[str, Any]] | None, str]:
    """Start the twin's `serve` on `weights` (and `manifest` over the image's own, if given);
    its /ping answer once it has failed or is ready, and its log."""
    port = _free_port()
    name = f"idp-vl-twin-{uuid.uuid4().hex[:8]}"
    mounts = ["--volume", f"{weights}:/opt/vl-models:ro"]
    if manifest is not None:
        mounts += ["--volume", f"{manifest}:{IMAGE_MANIFEST}:ro"]
    command = [
        *("docker", "run", "--detach", "--name", name, "--network", "host", *mounts),
        *("--env", f"VL_PORT={port}", "--env", f"VL_SERVER_URL={fake_vlm_server}"),
        *("--env", "VL_DEVICE=cpu", "--env", "VL_ENGINE_INSTANCES=1", vl_cpu_image, "serve"),
    ]
    subprocess.run(command, check=True, capture_output=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        answer = None
        while time.monotonic() < deadline:
            answer = _ping(port)
            if answer is not None and answer[1].get("state") in ("failed", "ready"):
                break
            time.sleep(1)
        logs = subprocess.run(["docker", "logs", name], capture_output=True, text=True, check=False)
        return answer, logs.stdout + logs.stderr
    finally:
        subprocess.run(["docker", "rm", "--force", name], capture_output=True, check=False)


def test_twin_builds_paddleocr_vl_up_to_the_weights(
    vl_cpu_image: str, fake_vlm_server: str, tmp_path: Path
) -> None:
    # GIVEN the CPU twin with placeholder weights, pinned, and an external (fake) VLM server
    weights = _placeholder_weights(tmp_path / "vl-models")
    manifest = _manifest_pinning(weights, tmp_path / "manifest.json")

    # WHEN its entry point starts the server and the engine is built
    answer, log = _start(vl_cpu_image, fake_vlm_server, weights, manifest=manifest)

    # THEN start-up got past the pins and PaddleX's dependency check and into the layout
    # model's weights: it fails there (placeholders), never on a missing or wrong dependency
    assert answer is not None, f"/ping never answered:\n{log[-3000:]}"
    status, body = answer
    assert body["state"] == "failed", body
    assert status == 503
    message = body["error"]["message"]
    assert "dependency" not in message.lower(), message
    assert "Invalid model file" in message, message  # Paddle Inference read the placeholder
    assert "DependencyError" not in log, log[-3000:]
    layout_model = VL_PIPELINE_MODELS[VL_DEFAULT_PIPELINE_VERSION][0]
    assert f"Creating model: ('{layout_model}'" in log, log[-3000:]


def test_twin_refuses_to_start_on_unpinned_baked_weights_naming_them(
    vl_cpu_image: str, fake_vlm_server: str, tmp_path: Path
) -> None:
    # GIVEN the same placeholder weights baked in, and the repository's manifest, which pins no
    # VL model
    weights = _placeholder_weights(tmp_path / "vl-models")

    answer, log = _start(vl_cpu_image, fake_vlm_server, weights, manifest=None)

    # THEN the server fails its start-up on the pins, naming both models, before PaddleX loads any
    assert answer is not None, f"/ping never answered:\n{log[-3000:]}"
    status, body = answer
    assert (status, body["state"]) == (503, "failed"), body
    for model in VL_PIPELINE_MODELS[VL_DEFAULT_PIPELINE_VERSION]:
        assert f"model {model} has no pin of its files" in body["error"]["message"], body
    assert "Creating model" not in log, log[-3000:]
