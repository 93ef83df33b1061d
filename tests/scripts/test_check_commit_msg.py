"""The commit-msg hook's check (scripts/check_commit_msg.py): what a commit message must look
like, and that the hook pre-commit installs runs it."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest

from tests.paths import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "check_commit_msg.py"


def _problems() -> Callable[[str], list[str]]:
    """The script's `problems`, loaded from its file (scripts/ holds scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("check_commit_msg", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return cast(Callable[[str], list[str]], module.problems)


problems = _problems()


@pytest.mark.parametrize(
    "message",
    [
        "Read table cells from the text layer\n",
        "Read table cells from the text layer\n\nThe body says why, with the figures.\n",
        "decoder: move the CTC rules into a package of their own\n",
        "Embed the glyphless font\n",
        "Merge branch 'main' of somewhere, with a subject longer than the seventy-two allowed\n",
        "Read table cells\n\n# Please enter the commit message for your changes.\n",
    ],
)
def test_a_short_imperative_subject_passes(message: str) -> None:
    assert problems(message) == []


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ("x" * 73 + "\n", "73 characters, more than 72"),
        ("Read table cells.\n", "ends in a full stop"),
        ("Added table cells\n", "starts with 'Added'"),
        ("decoder: moving the rules\n", "starts with 'moving'"),
        ("Read table cells\nfrom the text layer\n", "blank line"),
        ("\n\n", "no subject"),
    ],
)
def test_a_long_past_tense_or_run_on_subject_is_refused_with_its_reason(
    message: str, problem: str
) -> None:
    (found,) = problems(message)
    assert problem in found


def test_the_script_exits_non_zero_on_a_bad_message_and_names_the_problem(tmp_path: Path) -> None:
    # GIVEN a message file as git hands it to the commit-msg hook
    bad, good = tmp_path / "bad", tmp_path / "good"
    bad.write_text("Added a very long subject that goes on and on and on past the limit of it\n")
    good.write_text("Add a short subject\n\nWith a body.\n")

    # WHEN the hook's script checks them
    refused = subprocess.run(
        [sys.executable, SCRIPT, bad], capture_output=True, text=True, check=False
    )
    accepted = subprocess.run(
        [sys.executable, SCRIPT, good], capture_output=True, text=True, check=False
    )

    # THEN the bad one stops the commit with its reasons, the good one passes
    assert refused.returncode == 1
    assert "more than 72" in refused.stderr
    assert "'Added'" in refused.stderr
    assert accepted.returncode == 0


def test_the_hook_that_make_setup_installs_runs_this_script_at_commit_msg(
    tmp_path: Path,
) -> None:
    # GIVEN a repository holding this one's hook configuration and script (pre-commit stashes
    # a work tree's unstaged changes while it runs: never this one's), and a bad message
    work = tmp_path / "repo"
    (work / "scripts").mkdir(parents=True)
    shutil.copy2(REPO_ROOT / ".pre-commit-config.yaml", work)
    shutil.copy2(SCRIPT, work / "scripts")
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "add", "."], check=True)
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text("Added the things.\n")

    # WHEN pre-commit runs the configured commit-msg hooks on it
    pre_commit = Path(sys.executable).parent / "pre-commit"
    command = [str(pre_commit), "run", "--hook-stage", "commit-msg", "--commit-msg-filename"]
    done = subprocess.run(
        [*command, str(message)], cwd=work, capture_output=True, text=True, check=False
    )

    # THEN the configured hook is this script, and it stops the commit
    assert done.returncode == 1, done.stdout + done.stderr
    assert "say what the commit does" in done.stdout + done.stderr
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert "pre-commit install --hook-type commit-msg" in makefile
