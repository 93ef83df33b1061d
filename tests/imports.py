"""The project's imports, read statically from its sources (nothing is imported to read them).

What a module needs at run time is what it imports outside `if TYPE_CHECKING:` blocks, lazy
imports inside functions included; `runtime_closure` follows those from entry points, the way a
package must ship them. `imports_of` reads every import, type-only ones too, for the layering.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Final

from tests.paths import REPO_ROOT

PROJECT_PACKAGES: Final = frozenset(
    {
        "idp",
        "devkit",
        "lambdas",
        "ocr_processor_image",
        "office_converter_image",
        "sagemaker_container",
        "infra",
    }
)


def module_file(module: str, root: Path = REPO_ROOT) -> Path | None:
    path = root.joinpath(*module.split("."))
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    return None


def modules_under(package: str, root: Path = REPO_ROOT) -> list[str]:
    """Every module of a package (its __init__ included), as dotted names."""
    base = root.joinpath(*package.split("."))
    found = []
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


@cache
def _imports(path: Path, *, runtime_only: bool) -> frozenset[str]:
    """Dotted names the file imports: modules, and `module.name` for each `from` import."""
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if runtime_only and _is_type_checking_block(child):
                for other in child.orelse:  # type: ignore[attr-defined]
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                names.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                names.add(child.module)
                names.update(f"{child.module}.{alias.name}" for alias in child.names)
            visit(child)

    visit(ast.parse(path.read_text()))
    return frozenset(names)


def _is_type_checking_block(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    )


def imports_of(module: str, *, runtime_only: bool = False, root: Path = REPO_ROOT) -> set[str]:
    """The project modules `module` imports (third-party and standard modules left out)."""
    path = module_file(module, root)
    if path is None:
        raise ValueError(f"no module {module} under {root}")
    found = set()
    for name in _imports(path, runtime_only=runtime_only):
        if name.split(".")[0] not in PROJECT_PACKAGES:
            continue
        # `from a.b import c` names module a.b.c when c is one, else a name inside a.b.
        target = name if module_file(name, root) else name.rpartition(".")[0]
        if module_file(target, root):
            found.add(target)
    return found


def third_party_imports_of(module: str, root: Path = REPO_ROOT) -> set[str]:
    """The top-level names of every non-project module `module` imports, type-only ones too."""
    path = module_file(module, root)
    if path is None:
        raise ValueError(f"no module {module} under {root}")
    return {
        name.split(".")[0]
        for name in _imports(path, runtime_only=False)
        if name.split(".")[0] not in PROJECT_PACKAGES
    }


def runtime_closure(entries: Iterable[str], root: Path = REPO_ROOT) -> set[str]:
    """Every project module the `entries` need at run time, and their packages' __init__."""
    seen: set[str] = set()
    todo = list(entries)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:depth]) for depth in range(1, len(parts))]
        todo += imports_of(module, runtime_only=True, root=root)
    return seen


def unit_of(module: str) -> str:
    """The unit a module ships in: a layer of the runtime library (idp/contract, idp/flow, …),
    or a top-level package (lambdas, ocr_processor_image); `idp` alone for idp/__init__.py."""
    parts = module.split(".")
    if parts[0] == "idp" and len(parts) > 1:
        return f"idp/{parts[1]}"
    return parts[0]


def units_needed(entries: Iterable[str], root: Path = REPO_ROOT) -> set[str]:
    """The units the `entries` need at run time."""
    return {unit_of(module) for module in runtime_closure(entries, root)}
