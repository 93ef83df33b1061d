"""The code blocks of the docs (README.md and docs/*.md), for the tests that run or parse them as
written: the Integrate page's samples, the `idp` and benchmark command lines, the README's
result.json."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tests.paths import REPO_ROOT

INTEGRATE_PAGE: Final = REPO_ROOT / "docs" / "integrate.md"
README: Final = REPO_ROOT / "README.md"
DOC_PAGES: Final = (README, *sorted((REPO_ROOT / "docs").glob("*.md")))
SHELL_LANGUAGES: Final = frozenset({"bash", "sh", "shell"})
# Tokens that end one shell command and may start another.
_COMMAND_SEPARATORS: Final = frozenset({"|", "||", "&&", ";", "&"})
_REDIRECTION: Final = re.compile(r"^\d*[<>]")
_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
TRIM: Final = "…"


@dataclass(frozen=True)
class CodeBlock:
    """A fenced code block of a page: its language, its text, and where it starts."""

    page: Path
    line: int
    language: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO_ROOT)}:{self.line}"


def code_blocks(page: Path) -> list[CodeBlock]:
    """Every fenced block of a Markdown page, indented ones (inside a list) included."""
    blocks: list[CodeBlock] = []
    opened: tuple[int, str, str] | None = None  # (line, language, indent)
    body: list[str] = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        stripped = line.lstrip()
        if opened is None:
            if stripped.startswith("```"):
                opened = (number, stripped[3:].strip(), line[: len(line) - len(stripped)])
                body = []
        elif stripped.startswith("```"):
            start, language, _ = opened
            blocks.append(CodeBlock(page, start, language, "\n".join(body) + "\n"))
            opened = None
        else:
            indent = opened[2]
            body.append(line[len(indent) :] if line.startswith(indent) else line)
    return blocks


def integrate_sample(language: str, containing: str) -> str:
    """The one ```language block of the Integrate page that holds `containing`."""
    (sample,) = [
        block.text
        for block in code_blocks(INTEGRATE_PAGE)
        if block.language == language and containing in block.text
    ]
    return sample


def shell_blocks() -> list[CodeBlock]:
    return [
        block
        for page in DOC_PAGES
        for block in code_blocks(page)
        if block.language in SHELL_LANGUAGES
    ]


def logical_lines(script: str) -> list[str]:
    """The script's lines with backslash continuations joined."""
    lines: list[str] = []
    pending = ""
    for line in script.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def commands(line: str) -> list[list[str]]:
    """The simple commands of one shell line, each as its words (comments, redirections and
    leading variable assignments left out). A command substitution's inner command counts as a
    command of its own: `JOB_ID=$(idp submit FILE)` holds `idp submit FILE`."""
    words = shlex.split(line.replace("$(", " ( "), comments=True)
    found: list[list[str]] = []
    current: list[str] = []
    for word in [*words, ";"]:
        if word in _COMMAND_SEPARATORS or word in ("(", ")") or word.endswith(")"):
            if word.endswith(")") and word not in ("(", ")"):
                current.append(word[:-1])
            if current:
                found.append(current)
            current = []
        elif _REDIRECTION.match(word):
            if current:
                found.append(current)
            current = []
        elif current or not _ASSIGNMENT.match(word):
            current.append(word)
    return [command for command in found if command]


def idp_invocations() -> list[tuple[str, list[str]]]:
    """(where, arguments) of every `idp …` command in the shell blocks of the docs."""
    invocations = []
    for block in shell_blocks():
        for line in logical_lines(block.text):
            if not re.search(r"(^|[\s/(])idp\b", line):
                continue
            for words in commands(line):
                if words[0] == "idp" or words[0].endswith("/idp"):
                    invocations.append((f"{block.where}: {line.strip()}", words[1:]))
    return invocations


def without_trims(sample: str) -> str:
    """A JSON sample with its `…` trims taken out: a `…` outside a string goes, with the comma
    that joined it to its neighbours (one inside a string is part of the text)."""
    kept: list[str] = []
    in_string = escaped = False
    for character in sample:
        if in_string:
            kept.append(character)
            if escaped:
                escaped = False
            elif character == "\\":
                escaped = True
            elif character == '"':
                in_string = False
        elif character == '"':
            in_string = True
            kept.append(character)
        elif character != TRIM:
            kept.append(character)
    text = "".join(kept)
    text = re.sub(r",(\s*,)+", ",", text)  # [a, …, b] → [a, , b] → [a, b]
    text = re.sub(r",(\s*[\]}])", r"\1", text)  # [a, …] → [a]
    return re.sub(r"([\[{])\s*,", r"\1", text)  # […, b] → [b]
