"""The checkov baseline (infra/checkov-baseline.yaml) read as the gate reads it: every accepted
finding has a checkov id and a reason, and names a resource the template has. checkov itself runs
in `make checkov`, not here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.infra.support import Synthesized
from tests.paths import REPO_ROOT


def _load_gate() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "checkov_gate", REPO_ROOT / "scripts" / "checkov_gate.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


gate = _load_gate()


def test_every_accepted_finding_has_a_checkov_id_and_a_reason() -> None:
    # GIVEN the baseline as the gate loads it
    baseline = gate.load_baseline(gate.BASELINE)

    # THEN every entry names a checkov AWS check, resources and a reason of some substance
    assert baseline
    for entry in baseline:
        assert gate.CHECK_ID.match(entry.check), entry
        assert entry.resources, entry
        assert len(entry.reason.split()) >= 8, f"{entry.check}: say why it is accepted"


def test_every_accepted_resource_is_in_the_default_template(full: Synthesized) -> None:
    # GIVEN the default deployment's template (cdk.json's context, the gate's "default" mode)
    baseline = gate.load_baseline(gate.BASELINE)

    # THEN each resource the baseline accepts a finding on exists there, with that type
    for entry in baseline:
        for finding in entry.findings("default"):
            resource_type, logical_id = finding.resource.rsplit(".", 1)
            assert logical_id in full.resources, f"{finding}: no such resource (renamed?)"
            assert full.resources[logical_id]["Type"] == resource_type, finding


def test_a_finding_accepted_without_a_reason_is_refused(tmp_path: Path) -> None:
    # GIVEN a baseline entry whose reason is blank
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text(
        "accepted:\n"
        "  - check: CKV_AWS_21\n"
        "    resources: [AWS::S3::Bucket.StorageResultsBucketF87BB70E]\n"
        "    reason: ' '\n"
    )

    # WHEN the gate loads it THEN it refuses it
    with pytest.raises(gate.BaselineError, match="needs a reason"):
        gate.load_baseline(baseline)
