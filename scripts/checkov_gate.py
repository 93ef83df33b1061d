"""The checkov gate (`make checkov`): scans the synthesized CloudFormation template of each stack
mode with checkov and holds its failed checks to infra/checkov-baseline.yaml.

Every finding the baseline accepts carries its reason there. The gate fails on a failed check
the baseline lacks (fix it, or accept it with a reason) and on a baseline entry that no longer
fails (remove it), so the baseline says exactly what is accepted today.

checkov lives in its own virtualenv (.venv-checkov: its pins clash with the project's); this
script runs with the project's, which synthesizes the stack in-process as the infra tests do
(cdk.json's context, the cdk-nag packs, no Docker: image assets are staged, not built).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml  # type: ignore[import-untyped]

REPO_ROOT: Final = Path(__file__).resolve().parents[1]
CDK_JSON: Final = REPO_ROOT / "cdk.json"
BASELINE: Final = REPO_ROOT / "infra" / "checkov-baseline.yaml"
CHECKOV: Final = REPO_ROOT / ".venv-checkov" / "bin" / "checkov"
CHECK_ID: Final = re.compile(r"^CKV2?_AWS_\d+$")
# checkov offline: no Prisma Cloud mapping or guideline download, no PyPI version check.
CHECKOV_ENV: Final = {"BC_SKIP_MAPPING": "TRUE", "CKV_SKIP_PACKAGE_UPDATE_CHECK": "True"}


@dataclass(frozen=True)
class Mode:
    """A deployable shape of the stack: cdk.json's context with these values over it."""

    name: str
    context: Mapping[str, object] = field(default_factory=dict)


# Every mode a deployer can synthesize that changes which resources exist or how they are set.
MODES: Final = (
    Mode("default"),
    Mode("private", {"privateNetwork": "true"}),
)


@dataclass(frozen=True, order=True)
class Finding:
    """One failed check on one resource, as checkov names it ("AWS::S3::Bucket.<logical id>")."""

    check: str
    resource: str


@dataclass(frozen=True)
class Accepted:
    """A baseline entry: findings accepted in `modes` (every mode when empty), and why."""

    check: str
    resources: tuple[str, ...]
    reason: str
    modes: frozenset[str] = frozenset()

    def findings(self, mode: str) -> set[Finding]:
        if self.modes and mode not in self.modes:
            return set()
        return {Finding(self.check, resource) for resource in self.resources}


@dataclass(frozen=True)
class Scan:
    passed: int
    failed: dict[Finding, str]  # each failed check's title


class BaselineError(ValueError):
    """The baseline file is malformed (an entry without a reason, an unknown mode, ...)."""


def load_baseline(path: Path, modes: Sequence[Mode] = MODES) -> list[Accepted]:
    """The baseline's entries, checked: a check id, resources, a reason and known modes each."""
    known = {mode.name for mode in modes}
    document = yaml.safe_load(path.read_text()) or {}
    entries = document.get("accepted") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise BaselineError(f"{path}: expected a top-level 'accepted:' list")
    accepted = []
    for number, entry in enumerate(entries, start=1):
        where = f"{path} entry {number}"
        if not isinstance(entry, dict):
            raise BaselineError(f"{where}: expected a mapping")
        check, resources = entry.get("check"), entry.get("resources")
        reason, entry_modes = entry.get("reason"), entry.get("modes", [])
        if not isinstance(check, str) or not CHECK_ID.match(check):
            raise BaselineError(f"{where}: check {check!r} is not a checkov AWS check id")
        if not (
            isinstance(resources, list)
            and resources
            and all(isinstance(r, str) and r for r in resources)
        ):
            raise BaselineError(f"{where} ({check}): resources must be a non-empty list")
        if not isinstance(reason, str) or not reason.strip():
            raise BaselineError(f"{where} ({check}): every accepted finding needs a reason")
        if not isinstance(entry_modes, list) or not set(entry_modes) <= known:
            raise BaselineError(f"{where} ({check}): modes must be a list of {sorted(known)}")
        accepted.append(Accepted(check, tuple(resources), reason.strip(), frozenset(entry_modes)))
    return accepted


def synthesize(mode: Mode, outdir: Path) -> Path:
    """The stack's template as `cdk synth` writes it for `mode` (CloudFormation's built-in
    validation off: the tests run it; this gate only needs the template)."""
    from infra.app import build_app  # starts the jsii runtime: only when synthesizing

    context = {**json.loads(CDK_JSON.read_text())["context"], **mode.context}
    app, stack = build_app(context=context, outdir=str(outdir), builtin_validation=False)
    app.synth()
    return outdir / f"{stack.artifact_id}.template.json"


def scan(checkov: Path, template: Path) -> Scan:
    """checkov's CloudFormation checks on one template; an error or a parse failure raises."""
    command = [
        str(checkov),
        "--file",
        str(template),
        "--framework",
        "cloudformation",
        "--output",
        "json",
        "--skip-download",
        "--soft-fail",  # findings are this script's to judge: a non-zero exit is an error
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, **CHECKOV_ENV}, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"checkov exited {done.returncode}:\n{done.stderr[-4000:]}")
    reports: Any = json.loads(done.stdout)
    # One framework gives one report; checkov gives a list when several ran.
    (report,) = reports if isinstance(reports, list) else [reports]
    summary = report["summary"]
    if summary["parsing_errors"] or not summary["passed"] + summary["failed"]:
        raise RuntimeError(f"checkov did not scan {template.name}: {summary}")
    failed = {
        Finding(result["check_id"], result["resource"]): result["check_name"]
        for result in report.get("results", {}).get("failed_checks", [])
    }
    return Scan(passed=summary["passed"], failed=failed)


@dataclass(frozen=True)
class Verdict:
    mode: str
    scan: Scan
    accepted: set[Finding]
    new: set[Finding]
    stale: set[Finding]


def judge(mode: str, scan: Scan, baseline: Sequence[Accepted]) -> Verdict:
    expected: set[Finding] = set()
    for entry in baseline:
        expected |= entry.findings(mode)
    failed = set(scan.failed)
    return Verdict(mode, scan, failed & expected, failed - expected, expected - failed)


def print_verdict(verdict: Verdict) -> None:
    rows = [
        *(("accepted", f, verdict.scan.failed[f]) for f in sorted(verdict.accepted)),
        *(("NEW", f, verdict.scan.failed[f]) for f in sorted(verdict.new)),
        *(
            ("STALE", f, "no longer fails: remove it from the baseline")
            for f in sorted(verdict.stale)
        ),
    ]
    width = max((len(f.resource) for _, f, _ in rows), default=0)
    print(f"\n== mode {verdict.mode} ==")
    for status, finding, title in rows:
        print(f"{status:<9} {finding.check:<12} {finding.resource:<{width}}  {title}")
    print(
        f"mode {verdict.mode}: {verdict.scan.passed} passed, {len(verdict.scan.failed)} failed "
        f"({len(verdict.accepted)} accepted, {len(verdict.new)} new), {len(verdict.stale)} stale"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--checkov", type=Path, default=CHECKOV, help="the checkov executable")
    parser.add_argument("--baseline", type=Path, default=BASELINE)
    parser.add_argument(
        "--mode",
        action="append",
        choices=[mode.name for mode in MODES],
        help="scan only this mode (repeatable; default: every mode)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

    try:
        baseline = load_baseline(args.baseline)
    except BaselineError as exc:
        print(f"checkov gate FAILED: {exc}", file=sys.stderr)
        return 1
    modes = [mode for mode in MODES if args.mode is None or mode.name in args.mode]
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="checkov-gate-") as workdir:
        for mode in modes:
            template = synthesize(mode, Path(workdir) / mode.name)
            verdicts.append(judge(mode.name, scan(args.checkov, template), baseline))
    for verdict in verdicts:
        print_verdict(verdict)

    if any(verdict.new or verdict.stale for verdict in verdicts):
        print(
            f"\ncheckov gate FAILED: fix each NEW finding or accept it in {args.baseline} with "
            "its reason; remove each STALE entry.",
            file=sys.stderr,
        )
        return 1
    print("\ncheckov gate passed: every failed check is in the baseline, with its reason.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
