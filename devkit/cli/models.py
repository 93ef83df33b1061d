"""`idp models import-dir|sync|add-onnx`: fill the S3 model cache and pin what was uploaded in
the model manifest (to commit and deploy: nothing unpinned is ever loaded), and add ONNX exports
to local model directories."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from devkit.cli.common import EndpointOption, RegionOption, aws_endpoint, err, out
from devkit.cli.errors import CliError
from idp.contract.env.functions import Env
from idp.document.ocr.models.manifest import ModelPin

if TYPE_CHECKING:
    from idp.document.ocr.models.cache import ModelCache

models_app = typer.Typer(help="Fill and inspect the S3 model cache.")

BucketOption = Annotated[
    str, typer.Option(envvar=Env.MODEL_CACHE_BUCKET.value, help="model-cache bucket")
]
ManifestOption = Annotated[
    Path | None,
    typer.Option(
        help="the model manifest to write the pins into (default: the one in this checkout, "
        "idp/document/ocr/models/manifest.json)",
        dir_okay=False,
    ),
]


def _model_cache(bucket: str, endpoint_url: str | None, region: str | None) -> ModelCache:
    """The cache in `bucket`, once the bucket answers: before any model is packed or fetched."""
    from idp.document.ocr.models.cache import ModelCache

    s3 = aws_endpoint(endpoint_url, region).client("s3")
    s3.head_bucket(Bucket=bucket)
    return ModelCache(s3=s3, bucket=bucket)


@models_app.command("import-dir")
def models_import_dir(
    model_name: str,
    path: Annotated[Path, typer.Argument(exists=True, file_okay=False)],
    bucket: BucketOption,
    manifest: ManifestOption = None,
    endpoint_url: EndpointOption = None,
    region: RegionOption = None,
) -> None:
    """Upload a local model directory into the model-cache bucket and pin it."""
    from idp.document.ocr.models.cache import archive_key, is_model_dir

    if not is_model_dir(path):
        raise CliError(f"{path} is not a model directory: it needs inference.yml and weights")
    digest = _model_cache(bucket, endpoint_url, region).import_dir(model_name, path)
    out.print(f"{model_name} → s3://{bucket}/{archive_key(model_name)} (sha256 {digest})")
    _pin(
        [ModelPin(model_name, f"a local directory imported by an operator ({path.name})", digest)],
        manifest,
    )


@models_app.command("sync")
def models_sync(
    bucket: BucketOption,
    model_names: Annotated[
        list[str] | None, typer.Option("--model", help="model names (default: all)")
    ] = None,
    manifest: ManifestOption = None,
    endpoint_url: EndpointOption = None,
    region: RegionOption = None,
) -> None:
    """On a connected machine: download the official models, import them into the cache and
    pin them."""
    from idp.document.ocr.models.cache import sync
    from idp.document.ocr.models.catalogue import DEFAULT_SYNC_MODELS

    cache = _model_cache(bucket, endpoint_url, region)
    pins = sync(cache, model_names or list(DEFAULT_SYNC_MODELS))
    for pin in pins:
        out.print(f"{pin.name}: sha256 {pin.sha256} (as downloaded: {pin.hub_sha256})")
    _pin(pins, manifest)


def _pin(pins: list[ModelPin], manifest: Path | None) -> None:
    from idp.document.ocr.models.manifest import MANIFEST_PATH, ModelManifest

    path = manifest or MANIFEST_PATH
    if not pins:
        return
    ModelManifest.load(path).with_pins(pins).write(path)
    out.print(
        f"pinned {len(pins)} model(s) in {path}: commit it and deploy, so that the processor "
        "and the VL server load these archives and nothing else"
    )


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
