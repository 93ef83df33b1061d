"""Put a PaddleOCR-VL pipeline's model dirs into a folder: the image build's weight-baking step.

Runs on the (connected) build machine when the image is built with VL_BAKE_FROM_HUB=true:

    python -m sagemaker_container.bake_weights /opt/vl-models --pipeline-version v1.6

Models already complete in the folder (copied from the build context) are kept as they are.
"""

from __future__ import annotations

import argparse
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path

from idp.document.ocr.models.cache import HubDownloader, is_model_dir, paddlex_hub_download
from sagemaker_container.paddleocr_vl import PIPELINES, pipeline_models

logger = logging.getLogger(__name__)


def bake(
    dest: Path, *, pipeline_version: str, hub_download: HubDownloader = paddlex_hub_download
) -> list[Path]:
    """Make `dest/<model>` a complete model dir for both models of the pipeline version."""
    models = pipeline_models(pipeline_version)
    baked: list[Path] = []
    for name in (models.layout_model, models.vlm_model):
        target = dest / name
        if is_model_dir(target):
            logger.info("%s already in %s", name, dest)
        else:
            source = hub_download(name)
            if not is_model_dir(source):
                raise SystemExit(f"{name}: the download at {source} is not a model directory")
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(source, target, symlinks=False)
            logger.info("baked %s into %s", name, target)
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
