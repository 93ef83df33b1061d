"""Start-up failures reported by the real server process: /ping stays 503 and says why."""

from __future__ import annotations

from pathlib import Path

from .helpers import ServerProcess


def test_missing_vl_weights_keep_ping_503_and_name_the_models(tmp_path: Path) -> None:
    # GIVEN the PaddleOCR-VL engine with no weights in the image, no model cache, no hub
    server = ServerProcess(
        {
            "VL_ENGINE": "paddleocr-vl",
            "VL_MODELS_DIR": str(tmp_path / "empty"),
            "MODEL_CACHE_BUCKET": "",
            "ALLOW_HUB_DOWNLOAD": "false",
            "TMPDIR": str(tmp_path),
        },
        tmp_path / "server.log",
    )
    try:
        # WHEN it starts
        reply = server.wait_state({"failed", "ready"}, timeout_s=60)
        # THEN /ping answers 503 with a MODEL_UNAVAILABLE error naming both missing models
        assert reply.status == 503
        assert reply.body["state"] == "failed"
        error = reply.body["error"]
        assert error["code"] == "MODEL_UNAVAILABLE"
        assert "PP-DocLayoutV3" in error["message"]
        assert "PaddleOCR-VL-1.6-0.9B" in error["message"]
        assert str(tmp_path / "empty") in error["message"]
        # AND the process keeps running to report it, the log says it too, and invocations
        # are refused with the same error
        server.check_alive()
        assert "PP-DocLayoutV3" in server.log()
        invoked = server.invoke(
            {
                "job_id": "j1",
                "bucket": "b",
                "key": "input/PaddleOCR-VL/a.png",
                "model": "PaddleOCR-VL",
                "lang": "en",
            }
        )
        assert invoked.status == 503
        assert invoked.body["error"]["code"] == "MODEL_UNAVAILABLE"
    finally:
        server.stop()


def test_invalid_settings_stop_the_process_with_a_clear_message(tmp_path: Path) -> None:
    # GIVEN an engine name the container does not know
    server = ServerProcess({"VL_ENGINE": "tesseract"}, tmp_path / "server.log")
    try:
        # WHEN it starts THEN it exits with status 2 and names the setting
        assert server.process.wait(timeout=60) == 2
        assert "VL_ENGINE='tesseract'" in server.log()
    finally:
        server.stop()
