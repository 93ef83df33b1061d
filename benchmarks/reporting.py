"""What the benchmarks share: the results file (with the commit and date of the run), and for
those of the local pipeline their --models-dir / --output / --log arguments, the pipeline's log
kept off the terminal and the printed table."""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO_ROOT / "benchmarks" / "results"
T = TypeVar("T")


def provenance() -> dict[str, Any]:
    """The code a run measured and when: the commit checked out (and whether the tree had
    uncommitted changes), and the date and time of the run (UTC)."""

    def git(*command: str) -> str:
        done = subprocess.run(
            ["git", *command], cwd=REPO_ROOT, capture_output=True, text=True, check=False
        )
        return done.stdout.strip() if done.returncode == 0 else ""

    return {
        "commit": git("rev-parse", "HEAD") or None,
        "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no")),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


@dataclass(frozen=True)
class RunClock:
    """A run's wall time and the machine's load from its start, for its report."""

    started: float = field(default_factory=time.monotonic)
    load_start: float = field(default_factory=lambda: os.getloadavg()[0])

    def summary(self) -> str:
        """ "4.2 min, load average 1.9 → 2.1"."""
        minutes = (time.monotonic() - self.started) / 60
        return f"{minutes:.1f} min, load average {self.load_start:.1f} → {os.getloadavg()[0]:.1f}"

    def run_info(self, **settings: Any) -> dict[str, Any]:
        """The report's "run": wall minutes, load average at start and end, the run's own
        settings and the Python version."""
        return {
            "wall_minutes": round((time.monotonic() - self.started) / 60, 1),
            "load_average_1m": [round(self.load_start, 2), round(os.getloadavg()[0], 2)],
            **settings,
            "python": sys.version.split()[0],
        }


def write_results(report: dict[str, Any], output: Path) -> None:
    """The run's report as JSON, with its provenance under "recorded"."""
    output.parent.mkdir(parents=True, exist_ok=True)
    rest = {key: value for key, value in report.items() if key != "recorded"}
    recorded = {"recorded": provenance(), **rest}
    output.write_text(json.dumps(recorded, indent=1, ensure_ascii=False, default=str) + "\n")


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
    write_results(report, output)
    print(f"\nwrote {output} (pipeline log: {log_path})")
