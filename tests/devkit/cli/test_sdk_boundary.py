"""The SageMaker Python SDK is the CLI's dependency only: no Lambda, image or shared module uses
it, and neither image installs it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT

# Everything that ships in a Lambda zip or a container image (the CLI is in devkit/, never
# shipped).
DEPLOYED = ("lambdas", "ocr_processor_image", "sagemaker_container", "idp")


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def test_only_the_cli_imports_the_sagemaker_sdk() -> None:
    # GIVEN every Python module that is deployed
    sources = [path for folder in DEPLOYED for path in (REPO_ROOT / folder).rglob("*.py")]
    assert sources

    # WHEN their imports are read
    users = {
        str(path.relative_to(REPO_ROOT))
        for path in sources
        if any(m == "sagemaker" or m.startswith("sagemaker.") for m in _imported_modules(path))
    }

    # THEN none of them imports the SDK
    assert users == set()


@pytest.mark.parametrize("image", ["ocr_processor_image", "sagemaker_container"])
def test_no_image_installs_the_sagemaker_sdk(image: str) -> None:
    # GIVEN an image's pinned requirements
    lines = (REPO_ROOT / image / "requirements.txt").read_text().splitlines()

    # WHEN the package names are read
    packages = {
        re.split(r"[\s<>=!~\[;@]", line.strip(), maxsplit=1)[0].lower().replace("_", "-")
        for line in lines
        if line.strip() and not line.strip().startswith(("#", "-"))
    }

    # THEN neither the SDK nor its core package is among them
    assert packages.isdisjoint({"sagemaker", "sagemaker-core"})
