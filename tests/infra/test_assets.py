"""What the assets ship, by inclusion: the zip code holds exactly the packages its handlers
import, each image exactly what its entry point imports, the build context only what the images
copy (never devkit/, .venv, .models, node_modules, cdk.out)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

from idp.contract.topology import FUNCTIONS, Function
from infra.functions import ZIP_PACKAGES
from tests.imports import imports_of, modules_under, unit_of, units_needed
from tests.infra.support import Synthesized
from tests.paths import REPO_ROOT

NEVER_SHIPPED = (
    *(".venv", ".models", "node_modules", "cdk.out", ".git"),
    *("tests", "infra", "devkit", "benchmarks"),
)


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


ZIP_HANDLERS: Final = [
    spec.handler.rsplit(".", 1)[0]
    for function, spec in FUNCTIONS.items()
    if function not in (Function.PROCESSOR, Function.CONVERTER)
]
PROCESSOR_ENTRY: Final = FUNCTIONS[Function.PROCESSOR].handler.rsplit(".", 1)[0]
CONVERTER_ENTRY: Final = FUNCTIONS[Function.CONVERTER].handler.rsplit(".", 1)[0]
# The VL server (`serve`) and the weight baker its Dockerfile may run at build time.
VL_ENTRIES: Final = ["sagemaker_container.server", "sagemaker_container.bake_weights"]


def _zip_root(full: Synthesized) -> Path:
    (asset,) = [
        a for a in full.assets_manifest["files"].values() if a["source"].get("packaging") == "zip"
    ]
    return full.outdir / str(asset["source"]["path"])


def test_zip_asset_holds_exactly_what_its_handlers_import(full: Synthesized) -> None:
    # GIVEN the zip asset as the stack ships it, and what the four handlers import at run time
    files = _files(_zip_root(full))
    needed = units_needed(ZIP_HANDLERS)

    # THEN it holds exactly those units (job contract, AWS helpers, job store, job flow, the
    # handlers): no document engine, no developer kit, and nothing they do not import
    shipped = {
        unit_of(f.removesuffix(".py").removesuffix("/__init__").replace("/", ".")) for f in files
    }
    assert shipped == needed | {"idp"}, sorted(files)
    assert needed - {"idp"} == {"idp/contract", "idp/aws", "idp/jobstore", "idp/flow", "lambdas"}
    assert set(ZIP_PACKAGES) == needed - {"idp"}
    assert not [f for f in files if "__pycache__" in f or f.endswith(".pyc")]


def _copied_units(dockerfile: str) -> set[str]:
    """What a Dockerfile copies from the build context (COPY SRC... DEST, no --from)."""
    units = set()
    for line in (REPO_ROOT / dockerfile).read_text().splitlines():
        words = line.split()
        if not words or words[0] != "COPY" or words[1].startswith("--"):
            continue
        for source in words[1:-1]:
            module = source.strip("/").removesuffix(".py").replace("/", ".")
            if module.split(".")[0] in (
                "idp",
                "ocr_processor_image",
                "office_converter_image",
                "sagemaker_container",
            ):
                units.add(unit_of(module.removesuffix(".*").removesuffix(".__init__")))
    return units


@pytest.mark.parametrize(
    ("dockerfile", "entries", "expected"),
    [
        pytest.param(
            "ocr_processor_image/Dockerfile",
            [PROCESSOR_ENTRY],
            {"idp/contract", "idp/aws", "idp/jobstore", "idp/flow", "idp/document"},
            id="processor",
        ),
        pytest.param(
            "office_converter_image/Dockerfile",
            [CONVERTER_ENTRY],
            {"idp/contract", "idp/aws", "idp/document"},
            id="converter",
        ),
        pytest.param(
            "sagemaker_container/Dockerfile",
            VL_ENTRIES,
            {"idp/contract", "idp/aws", "idp/document"},
            id="vl",
        ),
    ],
)
def test_each_image_copies_exactly_what_its_entry_points_import(
    dockerfile: str, entries: list[str], expected: set[str]
) -> None:
    # GIVEN what the image's entry points import at run time
    needed = units_needed(entries)

    # THEN the Dockerfile copies exactly those units of the runtime library (the VL image no
    # job store and no job flow), its own package, and never the developer kit
    own = entries[0].split(".")[0]
    assert needed == {"idp", own} | expected
    assert _copied_units(dockerfile) == needed


def test_the_developer_kit_is_imported_by_nothing_that_ships() -> None:
    # GIVEN every module of the runtime library, the handlers and both images
    shipped = [
        module
        for package in (
            "idp",
            "lambdas",
            "ocr_processor_image",
            "office_converter_image",
            "sagemaker_container",
        )
        for module in modules_under(package)
    ]

    # THEN none imports devkit (not even for types), and the devkit is in no asset
    offenders = {
        module: sorted(i for i in imports_of(module) if i.split(".")[0] == "devkit")
        for module in shipped
    }
    assert {m: i for m, i in offenders.items() if i} == {}


@pytest.mark.parametrize(
    "dockerfile",
    [
        "ocr_processor_image/Dockerfile",
        "office_converter_image/Dockerfile",
        "sagemaker_container/Dockerfile",
    ],
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
    # The runtime library's layers the images copy, and nothing else of idp/.
    layers = {p.name for p in (root / "idp").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert layers == {"contract", "aws", "jobstore", "flow", "document"}
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
    root = _zip_root(full)
    modules = ZIP_HANDLERS

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
    assert len(modules) == 5
