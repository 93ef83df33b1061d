"""The runtime library's walls: idp/ in layers that only import downwards, and the developer kit
outside it.

    flow      ─► jobstore ─► aws ─► contract
    document  ─────────────► aws ─► contract

`contract` is pure data; `flow` moves jobs between functions and loads no document library;
`document` turns bytes into pages and text and knows no S3 work layout. The tooling lives in
devkit/, which may import anything and is imported by nothing that ships
(tests/infra/test_assets.py).

Inside idp/document/ocr the page path is engine-neutral: `engine.py`, `pipeline.py`, `page.py`,
the steps and the CTC decoding rules (`decoding/`) import no inference library, so every engine
gets every step; PaddleOCR's libraries are loaded by `paddle/` (and, for model files and
language tables, lazily by `models/`).
"""

from __future__ import annotations

from graphlib import TopologicalSorter
from pathlib import Path
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
# What runs a model: loaded by PaddleOCR's engines only, never by the steps around them.
INFERENCE_LIBRARIES: Final = frozenset({"paddle", "paddleocr", "paddlex", "cv2", "onnxruntime"})
OCR: Final = "idp.document.ocr"
# The engine seam (`engine.py`: what an engine offers, the protocols the steps read again with)
# belongs to the page path too.
ENGINE_NEUTRAL: Final = (
    f"{OCR}.engine",
    f"{OCR}.pipeline",
    f"{OCR}.page",
    f"{OCR}.steps",
    f"{OCR}.decoding",
)
# The only places of idp/ that load an inference library: the engines, and (lazily) the model
# cache's hub download and the model choice's reading of paddleocr's language tables.
LOADS_INFERENCE: Final = (f"{OCR}.paddle", f"{OCR}.models")


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


def _inference_libraries_in(module: str) -> set[str]:
    return third_party_imports_of(module) & INFERENCE_LIBRARIES


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == prefix or module.startswith(f"{prefix}.") for prefix in prefixes)


def test_the_page_path_imports_no_inference_library() -> None:
    # GIVEN the page path's modules: engine.py, pipeline.py, page.py, every step and decoding rule
    neutral = [module for module in modules_under(OCR) if _within(module, ENGINE_NEUTRAL)]
    assert len(neutral) >= 8
    assert any(_within(module, (f"{OCR}.decoding",)) for module in neutral)
    # THEN none of them imports an inference library, not even lazily inside a function
    found = {module: _inference_libraries_in(module) for module in neutral}
    assert {module: names for module, names in found.items() if names} == {}


def test_only_the_engines_and_the_model_files_load_an_inference_library() -> None:
    # (Outside the OCR path, idp/document/ink.py measures a page's ink with OpenCV's connected
    # components: image processing, not a model.)
    loading = {module for module in modules_under(OCR) if _inference_libraries_in(module)}
    assert loading, "the engines load their libraries somewhere"
    assert {module for module in loading if not _within(module, LOADS_INFERENCE)} == set()


def test_a_lazy_import_inside_a_function_breaks_the_rule(tmp_path: Path) -> None:
    # GIVEN a step that imports OpenCV and ONNX Runtime inside its functions, as page orientation
    # did when it held its classifiers
    package = tmp_path / "idp" / "document" / "ocr" / "steps"
    package.mkdir(parents=True)
    (package / "orientation.py").write_text(
        "def upside_down(lines):\n"
        "    import cv2\n"
        "    return cv2.resize(lines[0], (160, 80))\n\n"
        "def session(path):\n"
        "    import onnxruntime as ort\n"
        "    return ort.InferenceSession(path)\n"
    )
    # THEN the rule sees both
    found = third_party_imports_of(f"{OCR}.steps.orientation", root=tmp_path)
    assert found & INFERENCE_LIBRARIES == {"cv2", "onnxruntime"}


def test_the_folders_of_the_ocr_path_import_each_other_in_one_direction() -> None:
    # GIVEN each top-level part of idp/document/ocr and the parts it imports
    def part(module: str) -> str:
        return module.removeprefix(f"{OCR}.").split(".")[0]

    graph: dict[str, set[str]] = {}
    for module in modules_under(OCR):
        if module == OCR:
            continue
        inside = {part(name) for name in imports_of(module) if name.startswith(f"{OCR}.")}
        graph.setdefault(part(module), set()).update(inside - {part(module)})
    # THEN they form no cycle, and the steps, the decoding rules and the models know no engine
    TopologicalSorter(graph).prepare()  # raises CycleError on a cycle
    assert "paddle" not in graph["steps"] | graph["decoding"] | graph["models"]
    assert "registry" not in set().union(*graph.values())
