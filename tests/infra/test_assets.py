"""What the assets ship: the zip code holds only the Lambda packages, the image build
context only what the images need (never .venv, .models, node_modules, cdk.out)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.infra.support import Synthesized

NEVER_SHIPPED = (".venv", ".models", "node_modules", "cdk.out", ".git", "tests", "infra")


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_zip_asset_holds_only_the_lambda_packages(full: Synthesized) -> None:
    (asset,) = [
        a for a in full.assets_manifest["files"].values() if a["source"].get("packaging") == "zip"
    ]
    root = full.outdir / asset["source"]["path"]
    files = _files(root)
    assert {"idp/names.py", "idp/topology.py", "lambdas/__init__.py"} <= files
    assert all(f.split("/")[0] in ("idp", "lambdas") for f in files), sorted(files)
    assert not [f for f in files if f.startswith(("idp/cli/", "idp/local/", "idp/ocr/"))]
    assert not [f for f in files if "__pycache__" in f or f.endswith(".pyc")]


@pytest.mark.parametrize(
    "dockerfile", ["ocr_processor_image/Dockerfile", "sagemaker_container/Dockerfile"]
)
def test_image_build_context_is_filtered_by_dockerignore(
    full: Synthesized, dockerfile: str
) -> None:
    (image,) = [
        i
        for i in full.assets_manifest["dockerImages"].values()
        if i["source"]["dockerFile"] == dockerfile
    ]
    assert image["source"].get("platform") == "linux/amd64"
    root = full.outdir / image["source"]["directory"]
    top_level = {p.name for p in root.iterdir()}
    assert dockerfile in _files(root)
    assert "idp" in top_level
    assert not top_level & set(NEVER_SHIPPED), sorted(top_level)
    assert not [f for f in _files(root) if "__pycache__" in f]
