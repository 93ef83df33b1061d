"""ModelCache: local dir → verified S3 archive → hub (only when allowed), and `idp models`."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from devkit.cli.main import app
from idp.contract.errors import ModelUnavailable
from idp.document.ocr.models.cache import ModelCache, archive_key, sync
from tests.archives import tar_gz
from tests.processor.conftest import CACHE_BUCKET, Aws

MODEL = "PP-OCRv5_mobile_det"


def _model_dir(root: Path, name: str = MODEL, weights: bytes = b"weights") -> Path:
    path = root / name
    path.mkdir(parents=True)
    # No Paddle program file: these placeholders have nothing to export to ONNX.
    (path / "inference.yml").write_text(f"Global:\n  model_name: {name}\n")
    (path / "inference.pdiparams").write_bytes(weights)
    return path


def _cache(aws: Aws, root: Path, **kwargs: object) -> ModelCache:
    return ModelCache(s3=aws.s3, bucket=CACHE_BUCKET, local_root=root, **kwargs)  # type: ignore[arg-type]


def test_imported_dir_is_fetched_into_an_empty_root_intact(aws: Aws, tmp_path: Path) -> None:
    # GIVEN a model dir imported into the cache bucket
    source = _model_dir(tmp_path / "src", weights=b"\x01" * 5000)
    digest = _cache(aws, tmp_path / "unused").import_dir(MODEL, source)
    head = aws.s3.head_object(Bucket=CACHE_BUCKET, Key=archive_key(MODEL))
    assert head["Metadata"]["sha256"] == digest
    # WHEN a cold container fetches it into an empty root
    fetched = _cache(aws, tmp_path / "root").fetch(MODEL)
    # THEN the same files are there, under root/<model>
    assert fetched == tmp_path / "root" / MODEL
    for name in ("inference.yml", "inference.pdiparams"):
        assert (fetched / name).read_bytes() == (source / name).read_bytes()


def test_unpacked_model_is_reused_without_touching_the_bucket(aws: Aws, tmp_path: Path) -> None:
    _cache(aws, tmp_path).import_dir(MODEL, _model_dir(tmp_path / "src"))
    cache = _cache(aws, tmp_path / "root")
    first = cache.fetch(MODEL)
    # WHEN the archive is gone from the bucket (a warm container fetches again)
    aws.s3.delete_object(Bucket=CACHE_BUCKET, Key=archive_key(MODEL))
    # THEN the unpacked copy is used
    assert cache.fetch(MODEL) == first


def test_baked_models_are_preferred(aws: Aws, tmp_path: Path) -> None:
    baked = _model_dir(tmp_path / "image")
    cache = _cache(aws, tmp_path / "root", search_roots=[tmp_path / "image"])
    assert cache.fetch(MODEL) == baked


def test_tampered_archive_is_refused(aws: Aws, tmp_path: Path) -> None:
    # GIVEN an archive whose bytes do not match its recorded sha256
    _cache(aws, tmp_path).import_dir(MODEL, _model_dir(tmp_path / "src"))
    aws.s3.put_object(
        Bucket=CACHE_BUCKET,
        Key=archive_key(MODEL),
        Body=b"not the archive",
        Metadata={"sha256": "0" * 64},
    )
    # WHEN it is fetched THEN verification fails, naming the model, and nothing is installed
    with pytest.raises(ModelUnavailable, match=f"{MODEL}.*verification"):
        _cache(aws, tmp_path / "root").fetch(MODEL)
    assert not (tmp_path / "root" / MODEL).exists()


def _put_with_sidecar(aws: Aws, body: bytes) -> None:
    import hashlib

    key = archive_key(MODEL)
    aws.s3.put_object(Bucket=CACHE_BUCKET, Key=key, Body=body)
    digest = hashlib.sha256(body).hexdigest()
    aws.s3.put_object(Bucket=CACHE_BUCKET, Key=key + ".sha256", Body=f"{digest}  x.tar.gz\n")


def test_archive_verified_by_a_sidecar_checksum_is_accepted(aws: Aws, tmp_path: Path) -> None:
    _put_with_sidecar(
        aws,
        tar_gz({f"{MODEL}/inference.yml": b"Global: {}", f"{MODEL}/inference.pdiparams": b"w"}),
    )
    fetched = _cache(aws, tmp_path).fetch(MODEL)
    assert (fetched / "inference.pdiparams").read_bytes() == b"w"


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
    _put_with_sidecar(aws, tar_gz(members, links))
    with pytest.raises(ModelUnavailable, match=reason):
        _cache(aws, tmp_path / "root").fetch(MODEL)
    assert not (tmp_path / "evil.txt").exists()


def test_archive_without_a_checksum_is_refused(aws: Aws, tmp_path: Path) -> None:
    aws.s3.put_object(Bucket=CACHE_BUCKET, Key=archive_key(MODEL), Body=b"whatever")
    with pytest.raises(ModelUnavailable, match="sha256"):
        _cache(aws, tmp_path).fetch(MODEL)


def test_missing_model_without_hub_fails_fast_naming_it(aws: Aws, tmp_path: Path) -> None:
    def hub(name: str) -> Path:
        raise AssertionError("the hub must not be tried")

    started = time.perf_counter()
    with pytest.raises(ModelUnavailable) as raised:
        _cache(aws, tmp_path, hub_download=hub).fetch("SLANet_plus")
    assert time.perf_counter() - started < 5
    assert "SLANet_plus" in raised.value.message
    assert "ALLOW_HUB_DOWNLOAD" in raised.value.message


def test_hub_download_is_uploaded_back_to_the_cache(aws: Aws, tmp_path: Path) -> None:
    # GIVEN hub downloads allowed (stand-in downloader: this machine has no hub access)
    downloaded = _model_dir(tmp_path / "hub")
    cache = _cache(
        aws, tmp_path / "root", allow_hub_download=True, hub_download=lambda _: downloaded
    )
    # WHEN a model missing from the bucket is fetched
    assert cache.fetch(MODEL) == downloaded
    # THEN its archive is in the bucket for the next cold start
    assert cache.has_archive(MODEL)
    assert (_cache(aws, tmp_path / "fresh").fetch(MODEL) / "inference.pdiparams").is_file()


def test_failed_hub_download_is_model_unavailable(aws: Aws, tmp_path: Path) -> None:
    def offline(name: str) -> Path:
        raise OSError("Network is unreachable")

    cache = _cache(aws, tmp_path, allow_hub_download=True, hub_download=offline)
    with pytest.raises(ModelUnavailable, match="Network is unreachable"):
        cache.fetch(MODEL)


def test_sync_imports_missing_models_and_skips_cached_ones(aws: Aws, tmp_path: Path) -> None:
    cache = _cache(aws, tmp_path)
    cache.import_dir(MODEL, _model_dir(tmp_path / "src"))
    hub_calls: list[str] = []

    def hub(name: str) -> Path:
        hub_calls.append(name)
        return _model_dir(tmp_path / "hub", name)

    imported = sync(cache, [MODEL, "SLANet_plus"], hub_download=hub)
    assert list(imported) == ["SLANet_plus"]
    assert hub_calls == ["SLANet_plus"]
    assert cache.has_archive("SLANet_plus")


def _idp(*args: str) -> Result:
    """`idp ARGS` in this process, so its S3 is the emulated one."""
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def test_import_dir_cli_uploads_a_model_dir(aws: Aws, tmp_path: Path) -> None:
    source = _model_dir(tmp_path / "src")
    result = _idp("models", "import-dir", MODEL, str(source), "--bucket", CACHE_BUCKET)
    assert result.exit_code == 0, result.output
    assert f"s3://{CACHE_BUCKET}/models/{MODEL}.tar.gz" in result.stdout
    assert _cache(aws, tmp_path).has_archive(MODEL)


def test_import_dir_cli_takes_the_bucket_from_the_environment(
    aws: Aws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN MODEL_CACHE_BUCKET set, as in the processor's environment
    monkeypatch.setenv("MODEL_CACHE_BUCKET", CACHE_BUCKET)
    # WHEN a model dir is imported without --bucket
    result = _idp("models", "import-dir", MODEL, str(_model_dir(tmp_path / "src")))
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
    _cache(aws, tmp_path).import_dir(MODEL, source)
    fetched = _cache(aws, tmp_path / "root").fetch(MODEL)
    # THEN the archive also holds the ONNX export (kept beside the source for next time)
    assert (fetched / "inference.onnx").stat().st_size > 1_000_000
    assert (source / "inference.onnx").is_file()
