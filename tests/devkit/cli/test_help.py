"""Every `idp` command and option says what it is for."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from typer.main import get_command

from devkit.cli.main import app


def _commands(command: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def test_every_command_and_option_has_help() -> None:
    missing = []
    for path, command in _commands(get_command(app), ("idp",)):
        if not (command.help or "").strip():
            missing.append(" ".join(path))
        missing += [
            f"{' '.join(path)} {param.name}"
            for param in command.params
            if param.name != "help" and not (getattr(param, "help", None) or "").strip()
        ]
    assert missing == []
