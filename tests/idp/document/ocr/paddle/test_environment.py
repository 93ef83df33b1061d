"""While our engines build a PaddleX pipeline, no model may be created without its local
directory: PaddleX would download it from its hub, unpinned."""

from __future__ import annotations

from typing import Any

import pytest

from idp.contract.errors import ModelUnavailable
from idp.document.ocr.paddle.environment import only_local_models


def test_a_model_without_a_local_directory_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from paddlex.inference.pipelines.base import BasePipeline

    created: list[dict[str, Any]] = []
    # A STAND-IN for PaddleX's own create_model, which would build (or download) the model.
    monkeypatch.setattr(
        BasePipeline, "create_model", lambda _pipeline, config, **_kw: created.append(config)
    )
    with only_local_models():
        BasePipeline.create_model(
            object(), {"model_name": "PP-OCRv5_mobile_det", "model_dir": "/m"}
        )
        with pytest.raises(ModelUnavailable, match="model PP-FormulaNet_plus-L has no local"):
            BasePipeline.create_model(object(), {"model_name": "PP-FormulaNet_plus-L"})
        with pytest.raises(ModelUnavailable):
            BasePipeline.create_model(object(), {"model_name": "x", "model_dir": None})
        # a VLM that a vLLM server runs has its weights there, not here: nothing to download
        served = {"backend": "vllm-server", "server_url": "http://127.0.0.1:8118/v1"}
        BasePipeline.create_model(object(), {"model_name": "PaddleOCR-VL", "genai_config": served})
        with pytest.raises(ModelUnavailable, match="PaddleOCR-VL has no local"):
            BasePipeline.create_model(
                object(), {"model_name": "PaddleOCR-VL", "genai_config": {"backend": "native"}}
            )
    assert created == [
        {"model_name": "PP-OCRv5_mobile_det", "model_dir": "/m"},
        {"model_name": "PaddleOCR-VL", "genai_config": served},
    ]
    # and once the pipeline is built, PaddleX's own function is back
    assert BasePipeline.create_model.__name__ == "<lambda>"
