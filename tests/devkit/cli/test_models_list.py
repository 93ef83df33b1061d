"""`idp models list`: every model of the manifest, what it is for, its pin, and whether the
cache holds it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from devkit.cli.main import app
from idp.document.ocr.models.cache import archive_key
from idp.document.ocr.models.manifest import MANIFEST_PATH, ModelManifest
from tests.devkit.cli.conftest import LocalUp


def test_every_model_of_the_manifest_is_listed_with_its_purpose_and_pin() -> None:
    result = CliRunner().invoke(app, ["models", "list", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    pins = {pin.name: pin.sha256 for pin in ModelManifest.load().pins()}
    assert {row["model"]: row["sha256"] for row in rows} == pins
    assert all(row["for"] for row in rows), [row["model"] for row in rows if not row["for"]]
    assert {row["in_cache"] for row in rows} == {None}  # no cache was named


@pytest.mark.ocr
def test_the_local_cache_holds_the_pinned_offline_models(local_up: LocalUp) -> None:
    url = ["--endpoint-url", local_up.endpoint_url]
    result = CliRunner().invoke(app, ["models", "list", "--json", *url])
    assert result.exit_code == 0, result.output
    cached = {row["model"] for row in json.loads(result.stdout) if row["in_cache"]}
    # `idp local up` seeds the cache with the offline weights, each pinned
    assert {"PP-OCRv5_mobile_det", "PP-OCRv6_small_rec", "SLANet_plus"} <= cached


@pytest.mark.ocr
def test_import_dir_packs_the_pinned_archive_into_the_stack_cache(
    local_up: LocalUp, models_dir: Path, tmp_path: Path
) -> None:
    name = "PP-LCNet_x1_0_textline_ori"
    manifest = tmp_path / "manifest.json"
    manifest.write_text(MANIFEST_PATH.read_text())
    # WHEN an operator imports an offline model directory (the bucket from the emulator's names)
    command = ["models", "import-dir", name, str(models_dir / name), "--json"]
    command += ["--manifest", str(manifest), "--endpoint-url", local_up.endpoint_url]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    (imported,) = json.loads(result.stdout)
    # THEN it lands in the model cache as the very archive the checkout pins (packing is
    # reproducible), and the manifest written keeps that pin
    assert imported["uri"] == f"s3://{local_up.names['model_cache_bucket']}/{archive_key(name)}"
    assert imported["sha256"] == ModelManifest.load().pinned_sha256(name)
    assert ModelManifest.load(manifest).pinned_sha256(name) == imported["sha256"]
