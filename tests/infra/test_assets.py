"""What the assets ship: the zip code holds only the Lambda packages, the image build
context only what the images need (never .venv, .models, node_modules, cdk.out)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

from idp.contract.topology import FUNCTIONS, Function
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
    assert {"idp/contract/names.py", "idp/contract/topology.py", "lambdas/__init__.py"} <= files
    assert all(f.split("/")[0] in ("idp", "lambdas") for f in files), sorted(files)
    assert not [
        f for f in files if f.startswith(("devkit/cli/", "devkit/local/", "idp/document/ocr/"))
    ]
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


# What a zip function has besides its asset: the Python 3.12 runtime's boto3 and the Powertools
# layer (Powertools with its extras: pydantic v2, the X-Ray SDK, fastjsonschema, jmespath).
RUNTIME_AND_LAYER: Final = frozenset(
    {
        *("boto3", "botocore", "s3transfer", "jmespath", "dateutil", "urllib3", "six"),
        *("aws_lambda_powertools", "aws_xray_sdk", "wrapt", "fastjsonschema"),
        *("pydantic", "pydantic_core", "typing_extensions", "annotated_types"),
        "typing_inspection",
    }
)

# Imports each module in a fresh interpreter that can see the asset and nothing third-party
# beyond RUNTIME_AND_LAYER: a handler that needs a package the cloud lacks fails here.
_IMPORT_PROBE = """
import importlib, importlib.abc, sys
allowed = set(sys.argv[2].split(",")) | set(sys.stdlib_module_names) | {"idp", "lambdas"}
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top not in allowed and not top.startswith("_"):  # _x: the interpreter's own
            raise ImportError(f"{name} is not in the Lambda runtime, the layer or the asset")
        return None
sys.meta_path.insert(0, Refuse())
sys.path.insert(0, sys.argv[1])
for module in sys.argv[3:]:
    importlib.import_module(module)
"""


def test_every_zip_handler_imports_with_only_its_asset_the_runtime_and_the_layer(
    full: Synthesized,
) -> None:
    # GIVEN the zip asset as the stack ships it
    (asset,) = [
        a for a in full.assets_manifest["files"].values() if a["source"].get("packaging") == "zip"
    ]
    root = full.outdir / asset["source"]["path"]
    modules = [
        spec.handler.rsplit(".", 1)[0]
        for function, spec in FUNCTIONS.items()
        if function is not Function.PROCESSOR
    ]

    # WHEN each zip function's handler module is imported from it alone
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE, str(root), ",".join(RUNTIME_AND_LAYER), *modules],
        capture_output=True,
        text=True,
        check=False,
        cwd=root,
    )

    # THEN every one imports: nothing it needs is missing in the cloud
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(modules) == 4
