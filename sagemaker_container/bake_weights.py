"""Put a PaddleOCR-VL pipeline's model dirs into a folder: the image build's weight-baking step.

Runs on the (connected) build machine when the image is built with VL_BAKE_FROM_HUB=true:

    python -m sagemaker_container.bake_weights /opt/vl-models --pipeline-version v1.6

Models already complete in the folder (copied from the build context by whoever builds the
image) are kept as they are. A download is baked only if it matches its hub pin in the model
manifest (idp/document/ocr/models/manifest.json, written by `idp models sync`): the code that
vLLM runs with the weights (`--trust-remote-code`) is then the code that was pinned.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from idp.contract.errors import ModelUnavailable
from idp.document.ocr.models.cache import (
    HubDownloader,
    ModelCache,
    is_model_dir,
    paddlex_hub_download,
)
from idp.document.ocr.models.manifest import ModelManifest
from sagemaker_container.paddleocr_vl import PIPELINES, pipeline_models

logger = logging.getLogger(__name__)


def bake(
    dest: Path,
    *,
    pipeline_version: str,
    hub_download: HubDownloader = paddlex_hub_download,
    manifest: ModelManifest | None = None,
) -> list[Path]:
    """Make `dest/<model>` a complete model dir for both models of the pipeline version."""
    models = pipeline_models(pipeline_version)
    hub = ModelCache(
        local_root=dest,
        allow_hub_download=True,
        hub_download=hub_download,
        manifest=manifest,
    )
    baked: list[Path] = []
    for name in (models.layout_model, models.vlm_model):
        target = dest / name
        if is_model_dir(target):
            logger.info("%s already in %s", name, dest)
        else:
            try:
                target = hub.fetch(name)
            except ModelUnavailable as exc:
                raise SystemExit(f"{name}: {exc.message}") from exc
            logger.info("baked %s into %s (its hub pin verified)", name, target)
        baked.append(target)
    return baked


def main(argv: Sequence[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(
        prog="python -m sagemaker_container.bake_weights", description=__doc__.splitlines()[0]
    )
    parser.add_argument("dest", type=Path)
    parser.add_argument("--pipeline-version", default="v1.6", choices=sorted(PIPELINES))
    args = parser.parse_args(argv)
    args.dest.mkdir(parents=True, exist_ok=True)
    for path in bake(args.dest, pipeline_version=args.pipeline_version):
        print(path)


if __name__ == "__main__":
    main()
