"""Where the VL weights come from: baked into the image, else the S3 model cache, else (only when
explicitly allowed) PaddleX's hub download. Never fetched at request time: only at start-up.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from idp.contract.env.functions import Env
from idp.contract.env.vl import VlEnv
from idp.contract.errors import ModelUnavailable
from idp.document.ocr.models.cache import ModelCache
from sagemaker_container.paddleocr_vl import VlPipelineModels
from sagemaker_container.settings import ServerSettings

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


@dataclass(frozen=True)
class VlWeights:
    layout_dir: Path  # PaddleX format: inference.yml + inference.json + inference.pdiparams
    vlm_dir: Path  # Hugging Face format the vLLM server loads: config.json + *.safetensors


def model_cache_for(settings: ServerSettings, s3: S3Client | None) -> ModelCache:
    return ModelCache(
        s3=s3,
        bucket=settings.model_cache_bucket,
        local_root=Path(tempfile.gettempdir()) / "idp-models",
        search_roots=(settings.models_dir,),
        allow_hub_download=settings.allow_hub_download,
    )


def resolve_vl_weights(
    models: VlPipelineModels, *, cache: ModelCache, settings: ServerSettings
) -> VlWeights:
    """Both model dirs, or ModelUnavailable naming every model that is missing and why."""
    found: dict[str, Path] = {}
    problems: list[str] = []
    for name in (models.layout_model, models.vlm_model):
        try:
            found[name] = cache.fetch(name)
        except ModelUnavailable as exc:
            problems.append(exc.message)
    if problems:
        missing = [n for n in (models.layout_model, models.vlm_model) if n not in found]
        raise ModelUnavailable(
            f"PaddleOCR-VL {models.version} weights missing: {', '.join(missing)}. "
            f"Looked in the image ({VlEnv.MODELS_DIR.value}={settings.models_dir}/<model>), "
            f"the S3 model cache ({Env.MODEL_CACHE_BUCKET.value}="
            f"{settings.model_cache_bucket or 'unset'}) and the hub "
            f"({Env.ALLOW_HUB_DOWNLOAD.value}={str(settings.allow_hub_download).lower()}). "
            "Bake them into the image (docker build --build-arg VL_WEIGHTS_DIR=...) or import "
            "them into the model cache (idp models import-dir). Details: " + " | ".join(problems)
        )
    return VlWeights(layout_dir=found[models.layout_model], vlm_dir=found[models.vlm_model])
