"""The samples in the README and docs/ hold to the code: every `idp` command line parses against
the CLI, every benchmark module, benchmark option and make target named exists, and the README's
trimmed result.json holds only fields of the result schema."""

from __future__ import annotations

import json
import re
import types
import typing
from pathlib import Path
from typing import Any, Final

import pytest
import typer
from pydantic import BaseModel

from devkit.cli.main import app
from idp.contract.results import OcrResult
from tests.docs_samples import (
    DOC_PAGES,
    README,
    code_blocks,
    commands,
    idp_invocations,
    logical_lines,
    shell_blocks,
    without_trims,
)
from tests.paths import REPO_ROOT

BENCHMARKS: Final = REPO_ROOT / "benchmarks"
MAKEFILE: Final = REPO_ROOT / "Makefile"
README_MAX_LINES: Final = 200
BENCHMARKS_PAGE_MAX_LINES: Final = 400
_PATH_MISSING: Final = re.compile(r"^(file|dir|directory|path) '(.+)' does not exist")


def _parse_idp(arguments: list[str], scratch: Path) -> list[str]:
    """The command path that `idp ARGUMENTS` resolves to, parsed as the CLI would parse it but
    not run. A placeholder path (FILE, DIR, invoice.pdf) stands in for a real one: where the CLI
    asks that a path exist, the check is made again with one that does."""
    root = typer.main.get_command(app)
    arguments = list(arguments)
    for _ in range(len(arguments) + 1):
        path: list[str] = []
        try:
            context = root.make_context("idp", list(arguments))
            command: Any = root
            rest = [*getattr(context, "_protected_args", []), *context.args]
            while hasattr(command, "commands"):
                if not rest:
                    raise AssertionError(f"idp {' '.join(path)} needs a subcommand")
                name, command, rest = command.resolve_command(context, rest)
                path.append(name)
                context = command.make_context(name, rest, parent=context)
                rest = [*getattr(context, "_protected_args", []), *context.args]
            return path
        except typer.BadParameter as exc:
            missing = _PATH_MISSING.match(exc.message)
            if missing is None or missing.group(2) not in arguments:
                raise
            kind, placeholder = missing.groups()
            stand_in = scratch / ("a-dir" if kind.startswith("dir") else "a-file.pdf")
            if kind.startswith("dir"):
                stand_in.mkdir(exist_ok=True)
            else:
                stand_in.write_bytes(b"%PDF-1.4\n")
            arguments[arguments.index(placeholder)] = str(stand_in)
    raise AssertionError(f"idp {' '.join(arguments)}: placeholders did not settle")


def _benchmark_runs(text: str) -> list[tuple[str, list[str]]]:
    """(module, options) of every `python -m benchmarks.<name> …` in a stretch of shell text."""
    runs = []
    for line in logical_lines(text):
        for words in commands(line) if "-m benchmarks." in line else []:
            for index, word in enumerate(words[:-1]):
                module = words[index + 1].removeprefix("benchmarks.")
                if word == "-m" and words[index + 1] != module and module.isidentifier():
                    options = [w.split("=")[0] for w in words[index + 2 :] if w.startswith("--")]
                    runs.append((module, options))
    return runs


def _inline_code(page: Path) -> list[str]:
    """The inline code spans of a page, outside its fenced blocks."""
    text = re.sub(r"^\s*```.*?^\s*```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    return re.findall(r"`([^`\n]+)`", text)


def _benchmark_options(module: str) -> set[str]:
    """The options a benchmark's argparse declares (those it takes from reporting.py too)."""
    source = (BENCHMARKS / f"{module}.py").read_text(encoding="utf-8")
    if "add_pipeline_arguments" in source:
        source += (BENCHMARKS / "reporting.py").read_text(encoding="utf-8")
    return {*re.findall(r"""["'](--[a-z][a-z0-9-]*)["']""", source), "--help"}


def _make_targets() -> set[str]:
    text = MAKEFILE.read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z][\w-]*)\s*:(?!=)", text, flags=re.M))


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models a field's annotation holds (list[Line] → Line, X | None → X)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin in (typing.Annotated,):
        return _models_in(typing.get_args(annotation)[0])
    if origin is None and not isinstance(annotation, types.UnionType):
        return []
    return [model for inner in typing.get_args(annotation) for model in _models_in(inner)]


def _unknown_fields(value: Any, model: type[BaseModel], at: str) -> list[str]:
    """The keys of a JSON object (and of the objects inside it) that `model` does not declare."""
    unknown = []
    for key, inner in value.items():
        field = model.model_fields.get(key)
        if field is None:
            unknown.append(f"{at}.{key}")
            continue
        nested = _models_in(field.annotation)
        items = inner if isinstance(inner, list) else [inner]
        for index, item in enumerate(items):
            if isinstance(item, dict) and nested:
                where = f"{at}.{key}[{index}]" if isinstance(inner, list) else f"{at}.{key}"
                unknown += _unknown_fields(item, nested[0], where)
    return unknown


def _readme_result_sample() -> dict[str, Any]:
    (sample,) = [
        block.text
        for block in code_blocks(README)
        if block.language == "json" and '"job_id"' in block.text
    ]
    parsed: dict[str, Any] = json.loads(without_trims(sample))
    return parsed


def test_every_idp_command_line_in_the_docs_parses_against_the_cli(tmp_path: Path) -> None:
    # GIVEN every `idp …` line in the shell blocks of the README and docs/
    invocations = idp_invocations()
    assert len(invocations) >= 20, "the docs' idp command lines were not found"

    # WHEN each is parsed by the CLI itself (not run)
    failures = []
    for where, arguments in invocations:
        try:
            _parse_idp(arguments, tmp_path)
        except (typer.TyperException, AssertionError) as exc:  # a usage error says what is wrong
            failures.append(f"{where}\n    {type(exc).__name__}: {exc}")

    # THEN every one names a real command with options it accepts
    assert not failures, "\n".join(failures)


def test_the_readme_quickstart_reads_a_file_deploys_and_follows_a_job() -> None:
    # GIVEN the README's command lines
    parsed = [tuple(args[:2]) for where, args in idp_invocations() if where.startswith("README")]
    readme = README.read_text(encoding="utf-8")

    # THEN its quickstart runs a local file, deploys, and submits, follows and fetches a job
    assert "## Quickstart" in readme
    assert ("local", "run") in parsed
    assert {"submit", "status", "result"} <= {args[0] for args in parsed}
    assert "cdk deploy" in readme
    assert "make synth" in readme


def test_every_benchmark_the_docs_run_exists_with_the_options_they_give() -> None:
    # GIVEN every `python -m benchmarks.<name> …` in the docs' shell blocks and inline code
    runs = [run for block in shell_blocks() for run in _benchmark_runs(block.text)]
    runs += [
        run for page in DOC_PAGES for span in _inline_code(page) for run in _benchmark_runs(span)
    ]
    assert len(runs) >= 15, "the docs' benchmark commands were not found"

    # THEN each names a module of the benchmarks package and options its argparse declares
    problems = []
    for module, options in runs:
        if not (BENCHMARKS / f"{module}.py").is_file():
            problems.append(f"no module benchmarks/{module}.py")
            continue
        declared = _benchmark_options(module)
        problems += [f"benchmarks.{module} has no {o}" for o in options if o not in declared]
    assert not problems, "\n".join(problems)


def test_no_page_runs_a_benchmark_as_a_script() -> None:
    # GIVEN the pages' text
    scripts = [
        f"{page.relative_to(REPO_ROOT)}: {found}"
        for page in DOC_PAGES
        for found in re.findall(r"python3?\s+(?:\.\./)?(?:benchmarks/)?\w+\.py", page.read_text())
    ]
    # THEN a benchmark is always run as a module (`python -m benchmarks.<name>`)
    assert not scripts, "\n".join(scripts)


def test_every_make_target_the_docs_name_exists() -> None:
    # GIVEN every `make <target>` in the docs' shell blocks and inline code
    named = {
        target
        for block in shell_blocks()
        for line in logical_lines(block.text)
        for words in commands(line)
        if words[0] == "make" and len(words) > 1
        for target in words[1:]
        if not target.startswith("-") and "=" not in target
    }
    named |= {
        target
        for page in DOC_PAGES
        for span in _inline_code(page)
        for target in re.findall(r"^make ([a-z][\w-]*)", span)
    }
    assert {"demo", "test", "synth"} <= named

    # THEN the Makefile has each of them
    assert named <= _make_targets(), f"not in the Makefile: {sorted(named - _make_targets())}"


def test_the_readme_result_sample_holds_only_fields_of_the_result_schema() -> None:
    # GIVEN the README's trimmed result.json, its `…` taken out
    sample = _readme_result_sample()

    # THEN it is a page of lines and words, and every key is a field of OcrResult's models
    assert sample["pages"][0]["lines"][0]["words"], "the sample lost its page, line or word"
    assert _unknown_fields(sample, OcrResult, "result") == []


@pytest.mark.parametrize(
    ("sample", "expected"),
    [
        ('{"a": [1, …], "b": "x …", …}', {"a": [1], "b": "x …"}),
        ('{"a": […], "b": [{"c": 1}, …, {"c": 2}]}', {"a": [], "b": [{"c": 1}, {"c": 2}]}),
        ('{"s": "a \\" … \\"", …, "t": 1}', {"s": 'a " … "', "t": 1}),
    ],
)
def test_a_trimmed_json_sample_loses_its_trims_and_keeps_its_strings(
    sample: str, expected: dict[str, Any]
) -> None:
    assert json.loads(without_trims(sample)) == expected


def test_a_renamed_field_in_a_sample_is_found() -> None:
    # GIVEN the README's sample with one line's field renamed
    sample = _readme_result_sample()
    sample["pages"][0]["lines"][0]["conf"] = sample["pages"][0]["lines"][0].pop("confidence")

    # THEN the check names it
    assert _unknown_fields(sample, OcrResult, "result") == ["result.pages[0].lines[0].conf"]


def test_the_storefront_and_the_benchmarks_page_stay_short() -> None:
    readme = README.read_text(encoding="utf-8").splitlines()
    benchmarks = (REPO_ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8").splitlines()
    assert len(readme) <= README_MAX_LINES
    assert len(benchmarks) <= BENCHMARKS_PAGE_MAX_LINES
