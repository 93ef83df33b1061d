"""`idp models import-dir|sync|add-onnx`: fill the S3 model cache and pin what was uploaded in
the model manifest (to commit and deploy: nothing unpinned is ever loaded), and add ONNX exports
to local model directories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.table import Table

from devkit.cli.common import (
    EndpointOption,
    JsonOption,
    RegionOption,
    aws_endpoint,
    err,
    out,
    pipeline_names,
)
from devkit.cli.errors import CliError
from idp.contract.env.functions import Env
from idp.contract.names import STACK_NAME
from idp.document.ocr.models.manifest import ModelPin

if TYPE_CHECKING:
    from idp.document.ocr.models.cache import ModelCache

models_app = typer.Typer(help="Fill and inspect the S3 model cache.")

BucketOption = Annotated[
    str | None,
    typer.Option(
        envvar=Env.MODEL_CACHE_BUCKET.value,
        help="model-cache bucket; default: the stack's (--stack-name) or the local emulator's",
    ),
]
StackNameOption = Annotated[
    str | None,
    typer.Option(
        "--stack-name", help=f"deployed stack whose model cache to use (default {STACK_NAME})"
    ),
]
ManifestOption = Annotated[
    Path | None,
    typer.Option(
        help="the model manifest to write the pins into (default: the one in this checkout, "
        "idp/document/ocr/models/manifest.json)",
        dir_okay=False,
    ),
]


def _model_cache(
    bucket: str | None, stack_name: str | None, endpoint_url: str | None, region: str | None
) -> tuple[ModelCache, str]:
    """The cache in `bucket` (or the stack's, or the emulator's) and its bucket, once the bucket
    answers: before any model is packed or fetched."""
    from idp.document.ocr.models.cache import ModelCache

    endpoint = aws_endpoint(endpoint_url, region)
    if bucket is None:
        bucket = pipeline_names(endpoint, stack_name or STACK_NAME).model_cache_bucket
        if bucket is None:
            raise CliError(f"stack {stack_name or STACK_NAME} names no model cache: pass --bucket")
    s3 = endpoint.client("s3")
    s3.head_bucket(Bucket=bucket)
    return ModelCache(s3=s3, bucket=bucket), bucket


@models_app.command("import-dir")
def models_import_dir(
    model_name: Annotated[
        str, typer.Argument(help="the model's PaddleX name, e.g. PP-OCRv5_mobile_det")
    ],
    path: Annotated[
        Path,
        typer.Argument(exists=True, file_okay=False, help="its directory: inference.yml, weights"),
    ],
    bucket: BucketOption = None,
    manifest: ManifestOption = None,
    stack_name: StackNameOption = None,
    endpoint_url: EndpointOption = None,
    region: RegionOption = None,
    as_json: JsonOption = False,
) -> None:
    """Upload a local model directory into the model-cache bucket and pin it."""
    from idp.document.ocr.models.cache import archive_key, is_model_dir

    if not is_model_dir(path):
        raise CliError(f"{path} is not a model directory: it needs inference.yml and weights")
    cache, bucket = _model_cache(bucket, stack_name, endpoint_url, region)
    digest = cache.import_dir(model_name, path)
    uri = f"s3://{bucket}/{archive_key(model_name)}"
    if as_json:
        print(json.dumps([{"model": model_name, "uri": uri, "sha256": digest}]))
    else:
        out.print(f"{model_name} → {uri} (sha256 {digest})")
    _pin(
        [ModelPin(model_name, f"a local directory imported by an operator ({path.name})", digest)],
        manifest,
    )


@models_app.command("sync")
def models_sync(
    bucket: BucketOption = None,
    model_names: Annotated[
        list[str] | None, typer.Option("--model", help="model names (default: all)")
    ] = None,
    manifest: ManifestOption = None,
    stack_name: StackNameOption = None,
    endpoint_url: EndpointOption = None,
    region: RegionOption = None,
    as_json: JsonOption = False,
) -> None:
    """On a connected machine: download the official models, import them into the cache and
    pin them."""
    from idp.document.ocr.models.cache import sync
    from idp.document.ocr.models.catalogue import DEFAULT_SYNC_MODELS

    cache, _ = _model_cache(bucket, stack_name, endpoint_url, region)
    pins = sync(cache, model_names or list(DEFAULT_SYNC_MODELS))
    if as_json:
        shown = [{"model": p.name, "sha256": p.sha256, "hub_sha256": p.hub_sha256} for p in pins]
        print(json.dumps(shown))
    else:
        for pin in pins:
            out.print(f"{pin.name}: sha256 {pin.sha256} (as downloaded: {pin.hub_sha256})")
    _pin(pins, manifest)


def _pin(pins: list[ModelPin], manifest: Path | None) -> None:
    from idp.document.ocr.models.manifest import MANIFEST_PATH, ModelManifest

    path = manifest or MANIFEST_PATH
    if not pins:
        return
    ModelManifest.load(path).with_pins(pins).write(path)
    err.print(
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


@models_app.command("list")
def models_list(
    bucket: BucketOption = None,
    manifest: ManifestOption = None,
    stack_name: StackNameOption = None,
    endpoint_url: EndpointOption = None,
    region: RegionOption = None,
    as_json: JsonOption = False,
) -> None:
    """What each model is for, whether it is pinned, and (given a cache) whether it is there."""
    from idp.document.ocr.models.catalogue import model_purpose
    from idp.document.ocr.models.manifest import MANIFEST_PATH, ModelManifest

    pins = ModelManifest.load(manifest or MANIFEST_PATH).pins()
    asked = bucket is not None or stack_name is not None or endpoint_url is not None
    cache = _model_cache(bucket, stack_name, endpoint_url, region)[0] if asked else None
    rows = [
        {
            "model": pin.name,
            "for": model_purpose(pin.name),
            "sha256": pin.sha256,
            "in_cache": cache.has_archive(pin.name) if cache is not None else None,
        }
        for pin in pins
    ]
    if as_json:
        print(json.dumps(rows))
        return
    table = Table(title=f"{len(rows)} models", box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("model", "for", "pinned", *(["in cache"] if cache is not None else [])):
        table.add_column(column, no_wrap=column != "for")
    for row in rows:
        sha256 = row["sha256"]
        pinned = f"[green]{sha256[:12]}[/]" if isinstance(sha256, str) else "[yellow]no pin[/]"
        present = ["[green]yes[/]" if row["in_cache"] else "[red]no[/]"] if cache else []
        table.add_row(str(row["model"]), str(row["for"]), pinned, *present)
    out.print(table)
