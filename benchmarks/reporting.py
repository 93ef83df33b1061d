"""What the benchmarks of the local pipeline share: their --models-dir / --output / --log
arguments, the pipeline's log kept off the terminal, the printed table and the JSON report."""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

REPO_ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")


def add_pipeline_arguments(parser: argparse.ArgumentParser, *, results: Path) -> None:
    """--models-dir, --output and --log, as every benchmark of the local pipeline takes them."""
    parser.add_argument(
        "--models-dir", default=os.environ.get("IDP_MODELS_DIR", str(REPO_ROOT / ".models"))
    )
    parser.add_argument("--output", type=Path, default=results)
    parser.add_argument(
        "--log", type=Path, default=None, help="pipeline logs go here (default: a temp file)"
    )


def run_logging_to(log: Path | None, prefix: str, run: Callable[[], T]) -> tuple[T, Path]:
    """`run()` with stderr in `log` (default: a new temp file named `prefix`...), and that file.

    The functions log every job to stderr; this keeps the terminal for the report. The workers
    are spawned processes and inherit fd 2, so it is redirected at the descriptor level.
    """
    log_path = log or Path(tempfile.mkstemp(prefix=prefix, suffix=".log")[1])
    saved_stderr = os.dup(2)
    with log_path.open("ab") as log_file:
        os.dup2(log_file.fileno(), 2)
        logging.basicConfig(level=logging.WARNING)
        try:
            return run(), log_path
        finally:
            os.dup2(saved_stderr, 2)


def run_and_report(
    args: argparse.Namespace,
    log_prefix: str,
    run: Callable[[argparse.Namespace], dict[str, Any]],
    print_table: Callable[[dict[str, Any]], None],
) -> dict[str, Any]:
    """`run(args)` with the pipeline's log in `args.log` (run_logging_to), then its table
    printed and its report written to `args.output`; the report."""
    report, log_path = run_logging_to(args.log, log_prefix, lambda: run(args))
    print_table(report)
    write_report(report, args.output, log_path)
    return report


def print_rows(rows: Sequence[tuple[str, str]]) -> None:
    """Names and values in two columns, the names padded to the longest."""
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


def write_report(report: dict[str, Any], output: Path, log_path: Path) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {output} (pipeline log: {log_path})")
