"""ONNX exports of Paddle models (inference.onnx beside the same weights, made with paddle2onnx)
so the processor can run them on ONNX Runtime."""

from __future__ import annotations

import importlib.util
import logging
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

logger = logging.getLogger(__name__)

ONNX_FILE: Final = "inference.onnx"
ONNX_OPSET: Final = 11


def onnx_export_available() -> bool:
    return importlib.util.find_spec("paddle2onnx") is not None


def export_onnx(model_dir: Path, *, timeout_s: float = 900) -> bool:
    """Add inference.onnx (the same weights, via paddle2onnx) to a Paddle model dir.

    Runs in a child process (paddle2onnx imports paddle). Returns False when the model cannot
    be exported (no converter, no Paddle program, or an operator it does not support).
    """
    if (model_dir / ONNX_FILE).is_file():
        return True
    program = next(
        (
            model_dir / name
            for name in ("inference.json", "inference.pdmodel")
            if (model_dir / name).is_file()
        ),
        None,
    )
    if program is None or not (model_dir / "inference.pdiparams").is_file():
        return False
    if not onnx_export_available():
        return False
    with tempfile.TemporaryDirectory(prefix="idp-onnx-") as tmp:
        target = Path(tmp) / ONNX_FILE
        command = [
            sys.executable,
            "-c",
            "import sys; from paddle2onnx.command import main; sys.argv[0] = 'paddle2onnx'; main()",
            "--model_dir",
            str(model_dir),
            "--model_filename",
            program.name,
            "--params_filename",
            "inference.pdiparams",
            "--save_file",
            str(target),
            "--opset_version",
            str(ONNX_OPSET),
        ]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout_s, check=False
            )
        except subprocess.TimeoutExpired:
            logger.warning("paddle2onnx timed out on %s", model_dir)
            return False
        if done.returncode != 0 or not target.is_file():
            logger.warning("paddle2onnx could not export %s: %s", model_dir, done.stderr[-2000:])
            return False
        shutil.move(str(target), str(model_dir / ONNX_FILE))
    return True
