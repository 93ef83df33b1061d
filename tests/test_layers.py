"""The runtime library's walls: idp/ in layers that only import downwards, and the developer kit
outside it.

    flow      ─► jobstore ─► aws ─► contract
    document  ─────────────► aws ─► contract

`contract` is pure data; `flow` moves jobs between functions and loads no document library;
`document` turns bytes into pages and text and knows no S3 work layout. The tooling lives in
devkit/, which may import anything and is imported by nothing that ships
(tests/infra/test_assets.py).
"""

from __future__ import annotations

from graphlib import TopologicalSorter
from typing import Final

import pytest

from tests.imports import imports_of, modules_under, third_party_imports_of, unit_of

# Each layer of idp/ and the layers it may import.
ALLOWED: Final = {
    "idp/contract": set(),
    "idp/aws": {"idp/contract"},
    "idp/jobstore": {"idp/contract", "idp/aws"},
    "idp/document": {"idp/contract", "idp/aws"},
    "idp/flow": {"idp/contract", "idp/aws", "idp/jobstore"},
}
MAX_LAYERS: Final = 5
# What reads pages and pixels: never loaded by the job's flow (nor by the zip functions).
DOCUMENT_LIBRARIES: Final = frozenset(
    {"numpy", "PIL", "pypdfium2", "pypdf", "paddle", "paddleocr", "paddlex", "cv2", "onnxruntime"}
)


def _layer_imports() -> dict[str, set[str]]:
    """Each layer of idp/ and the other units its modules import (type-only imports too)."""
    graph: dict[str, set[str]] = {}
    for module in modules_under("idp"):
        if module == "idp":
            continue
        layer = unit_of(module)
        imported = {unit_of(name) for name in imports_of(module)} - {layer}
        graph.setdefault(layer, set()).update(imported)
    return graph


def test_idp_holds_exactly_its_layers() -> None:
    assert set(_layer_imports()) == set(ALLOWED)


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_layer_imports_only_the_layers_below_it(layer: str) -> None:
    # GIVEN what the layer's modules import
    imported = _layer_imports()[layer]

    # THEN only layers below it: nothing above it, and nothing outside idp/ (no handler, no
    # image, no devkit)
    assert imported <= ALLOWED[layer], sorted(imported - ALLOWED[layer])


def test_the_layers_have_no_cycle_and_are_at_most_five_deep() -> None:
    graph = _layer_imports()
    order = list(TopologicalSorter(graph).static_order())  # raises CycleError on a cycle
    depth: dict[str, int] = {}
    for layer in order:
        depth[layer] = 1 + max((depth[below] for below in graph[layer]), default=0)
    assert max(depth.values()) <= MAX_LAYERS
    assert depth == {
        "idp/contract": 1,
        "idp/aws": 2,
        "idp/jobstore": 3,
        "idp/document": 3,
        "idp/flow": 4,
    }


@pytest.mark.parametrize("layer", ["idp/contract", "idp/aws", "idp/jobstore", "idp/flow"])
def test_what_the_zip_functions_ship_loads_no_document_library(layer: str) -> None:
    package = layer.replace("/", ".")
    loaded = {
        module: sorted(third_party_imports_of(module) & DOCUMENT_LIBRARIES)
        for module in modules_under(package)
    }
    assert {module: names for module, names in loaded.items() if names} == {}
