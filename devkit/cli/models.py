"""`idp models import-dir|sync|add-onnx`: fill the S3 model cache, and add ONNX exports to
local model directories."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from devkit.cli.common import EndpointOption, RegionOption, aws_endpoint, err, out
from idp.contract.env.functions import Env

if TYPE_CHECKING:
    from idp.document.ocr.models.cache import ModelCache

models_app = typer.Typer(help="Fill and inspect the S3 model cache.")

BucketOption = Annotated[
    str, typer.Option(envvar=Env.MODEL_CACHE_BUCKET.value, help="model-cache bucket")
]


def _model_cache(bucket: str, endpoint_url: str | None, region: str | None) -> ModelCache:
    from idp.document.ocr.models.cache import ModelCache

    return ModelCache(s3=aws_endpoint(endpoint_url, region).client("s3"), bucket=bucket)


@models_app.command("import-dir")
def models_import_dir(
    model_name: str,
    path: Annotated[Path, typer.Argument(exists=True, file_okay=False)],
    bucket: BucketOption,
    endpoint_url: EndpointOption = None,
    region: RegionOption = None,
) -> None:
    """Upload a local model directory into the model-cache bucket."""
    from idp.document.ocr.models.cache import archive_key

    digest = _model_cache(bucket, endpoint_url, region).import_dir(model_name, path)
    out.print(f"{model_name} → s3://{bucket}/{archive_key(model_name)} (sha256 {digest})")


@models_app.command("sync")
def models_sync(
    bucket: BucketOption,
    model_names: Annotated[
        list[str] | None, typer.Option("--model", help="model names (default: all)")
    ] = None,
    endpoint_url: EndpointOption = None,
    region: RegionOption = None,
) -> None:
    """On a connected machine: download the official models and import them into the cache."""
    from idp.document.ocr.models.cache import sync
    from idp.document.ocr.models.catalogue import DEFAULT_SYNC_MODELS

    cache = _model_cache(bucket, endpoint_url, region)
    imported = sync(cache, model_names or list(DEFAULT_SYNC_MODELS))
    for model_name, digest in imported.items():
        out.print(f"{model_name}: sha256 {digest}")


@models_app.command("add-onnx")
def models_add_onnx(
    paths: Annotated[list[Path], typer.Argument(help="Paddle model directories")],
) -> None:
    """Export inference.onnx (the same weights, via paddle2onnx) into local model directories."""
    from idp.document.ocr.models.onnx_export import export_onnx

    failed = [str(path) for path in paths if not export_onnx(path)]
    if failed:
        err.print(
            f"could not export: {', '.join(failed)} (is paddle2onnx installed?)", soft_wrap=True
        )
        raise typer.Exit(code=1)
