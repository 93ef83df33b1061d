"""`idp models import-dir|sync|add-onnx`: fill the S3 model cache and pin what was uploaded in
the model manifest (to commit and deploy: nothing unpinned is ever loaded), and add ONNX exports
to local model directories."""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
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
    with_options,
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


@dataclass(frozen=True)
class CacheTarget:
    """The model cache a command works on: --bucket, or the one a stack's outputs name
    (--stack-name, or the local emulator's with --endpoint-url)."""

    bucket: str | None
    stack_name: str | None
    endpoint_url: str | None
    region: str | None

    @property
    def named(self) -> bool:
        return any(value is not None for value in (self.bucket, self.stack_name, self.endpoint_url))

    def open(self) -> tuple[ModelCache, str]:
        """The cache and its bucket, once the bucket answers: before any model is packed or
        fetched."""
        from idp.document.ocr.models.cache import ModelCache

        endpoint = aws_endpoint(self.endpoint_url, self.region)
        stack_name = self.stack_name or STACK_NAME
        bucket = self.bucket or pipeline_names(endpoint, stack_name).model_cache_bucket
        if bucket is None:
            raise CliError(f"stack {stack_name} names no model cache: pass --bucket")
        s3 = endpoint.client("s3")
        s3.head_bucket(Bucket=bucket)
        return ModelCache(s3=s3, bucket=bucket), bucket


with_cache_target = with_options(
    "cache",
    tuple(
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=option)
        for name, option in (
            ("bucket", BucketOption),
            ("stack_name", StackNameOption),
            ("endpoint_url", EndpointOption),
            ("region", RegionOption),
        )
    ),
    CacheTarget,
)


@models_app.command("import-dir")
@with_cache_target
def models_import_dir(
    model_name: Annotated[
        str, typer.Argument(help="the model's PaddleX name, e.g. PP-OCRv5_mobile_det")
    ],
    path: Annotated[
        Path,
        typer.Argument(exists=True, file_okay=False, help="its directory: inference.yml, weights"),
    ],
    manifest: ManifestOption = None,
    as_json: JsonOption = False,
    *,
    cache: CacheTarget,
) -> None:
    """Upload a local model directory into the model-cache bucket and pin it."""
    from idp.document.ocr.models.cache import archive_key, is_model_dir

    if not is_model_dir(path):
        raise CliError(f"{path} is not a model directory: it needs inference.yml and weights")
    model_cache, bucket = cache.open()
    digests = model_cache.import_dir(model_name, path)
    digest = digests.sha256
    uri = f"s3://{bucket}/{archive_key(model_name)}"
    if as_json:
        print(json.dumps([{"model": model_name, "uri": uri, "sha256": digest}]))
    else:
        out.print(f"{model_name} → {uri} (sha256 {digest})")
    _pin(
        [
            ModelPin(
                model_name,
                f"a local directory imported by an operator ({path.name})",
                digest,
                tree_sha256=digests.tree_sha256,
            )
        ],
        manifest,
    )


@models_app.command("sync")
@with_cache_target
def models_sync(
    model_names: Annotated[
        list[str] | None, typer.Option("--model", help="model names (default: all)")
    ] = None,
    manifest: ManifestOption = None,
    as_json: JsonOption = False,
    *,
    cache: CacheTarget,
) -> None:
    """On a connected machine: download the official models, import them into the cache and
    pin them."""
    from idp.document.ocr.models.cache import sync
    from idp.document.ocr.models.catalogue import DEFAULT_SYNC_MODELS

    pins = sync(cache.open()[0], model_names or list(DEFAULT_SYNC_MODELS))
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
@with_cache_target
def models_list(
    manifest: ManifestOption = None,
    as_json: JsonOption = False,
    *,
    cache: CacheTarget,
) -> None:
    """What each model is for, whether it is pinned, and (given a cache) whether it is there."""
    from idp.document.ocr.models.catalogue import model_purpose
    from idp.document.ocr.models.manifest import MANIFEST_PATH, ModelManifest

    pins = ModelManifest.load(manifest or MANIFEST_PATH).pins()
    model_cache = cache.open()[0] if cache.named else None
    rows = [
        {
            "model": pin.name,
            "for": model_purpose(pin.name),
            "sha256": pin.sha256,
            "in_cache": model_cache.has_archive(pin.name) if model_cache else None,
        }
        for pin in pins
    ]
    if as_json:
        print(json.dumps(rows))
        return
    table = Table(title=f"{len(rows)} models", box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("model", "for", "pinned", *(["in cache"] if model_cache else [])):
        table.add_column(column, no_wrap=column != "for")
    for row in rows:
        sha256 = row["sha256"]
        pinned = f"[green]{sha256[:12]}[/]" if isinstance(sha256, str) else "[yellow]no pin[/]"
        present = ["[green]yes[/]" if row["in_cache"] else "[red]no[/]"] if model_cache else []
        table.add_row(str(row["model"]), str(row["for"]), pinned, *present)
    out.print(table)
