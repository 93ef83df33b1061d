"""The model cache: resolve a PaddleOCR model name to a local model directory.

Order: unpacked locally (baked into the image or left by an earlier invocation in /tmp) →
archive `models/<name>.tar.gz` in the model-cache bucket → PaddleX's own hub download, only
where allowed. Whatever comes from the bucket or the hub is verified against the sha256 pinned
in the repository's model manifest (idp.document.ocr.models.manifest) before it is unpacked; a
model without a pin, or whose bytes differ from it, fails with MODEL_UNAVAILABLE naming it.
Nothing this class does at run time writes to the bucket: only `idp models import-dir|sync`,
run by an operator, fill it (and write the pins).

Archives carry an ONNX export of the same weights (idp.document.ocr.models.onnx_export) so the
processor can run them on ONNX Runtime.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from botocore.exceptions import ClientError

from idp.aws.errors import is_missing_object
from idp.contract import names
from idp.contract.env.functions import Env
from idp.contract.errors import ModelUnavailable
from idp.document.ocr.models.archives import (
    COMPLETE_MARKER,
    archive_tree_sha256,
    pack_model_dir,
    safe_extract,
    sha256_file,
    tree_sha256,
)
from idp.document.ocr.models.catalogue import DEFAULT_SYNC_MODELS
from idp.document.ocr.models.manifest import ModelManifest, ModelPin, default_manifest
from idp.document.ocr.models.onnx_export import ONNX_FILE, export_onnx, onnx_export_available

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

logger = logging.getLogger(__name__)

DEFAULT_LOCAL_ROOT: Final = Path("/tmp/models")  # noqa: S108 - Lambda's only writable disk
SYNC_SOURCE: Final = "PaddleX official model (hub), packed by `idp models sync`"
# x-amz-meta-sha256 on the archive object: for people reading the bucket, never trusted.
SHA256_METADATA_KEY: Final = "sha256"


@dataclass(frozen=True)
class ArchiveDigests:
    """What `import_dir` uploaded, as the manifest pins it."""

    sha256: str  # of the archive
    tree_sha256: str  # of the files it unpacks to


def archive_key(model_name: str) -> str:
    return f"{names.MODEL_CACHE_PREFIX}{model_name}.tar.gz"


def is_model_dir(path: Path) -> bool:
    """A directory PaddleX can load: a config plus weights in one of its formats."""
    if not path.is_dir():
        return False
    has_config = (path / "inference.yml").is_file() or (path / "config.json").is_file()
    has_weights = any(
        (path / name).is_file() for name in ("inference.pdiparams", ONNX_FILE, "model.safetensors")
    ) or any(path.glob("*.safetensors"))
    return has_config and has_weights


def _validate_model_name(model_name: str) -> None:
    # Model names become paths and S3 keys: keep them to PaddleX's own alphabet.
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
    if not model_name or not set(model_name) <= allowed or model_name.startswith("."):
        raise ValueError(f"invalid model name {model_name!r}")


HubDownloader = Callable[[str], Path]


def paddlex_hub_download(model_name: str) -> Path:
    """Let PaddleX download an official model by name (needs network to its model hosters)."""
    from paddlex.inference.utils.official_models import official_models

    return Path(official_models[model_name])


class ModelCache:
    """Resolves model names to local dirs; takes its S3 client, creates none (without a client
    and bucket it reads only local dirs, and the hub where allowed).

    `search_roots` are read-only places checked first (e.g. models baked into the image);
    `local_root` is where archives are unpacked (on Lambda: under /tmp); `manifest` holds the
    pins that archives from the bucket or the hub must match (the repository's by default).
    """

    def __init__(
        self,
        *,
        s3: S3Client | None = None,
        bucket: str | None = None,
        local_root: Path = DEFAULT_LOCAL_ROOT,
        search_roots: Sequence[Path] = (),
        allow_hub_download: bool = False,
        hub_download: HubDownloader = paddlex_hub_download,
        manifest: ModelManifest | None = None,
    ) -> None:
        self._s3 = s3
        self._bucket = bucket
        self.local_root = local_root
        self._search_roots = tuple(search_roots)
        self._allow_hub = allow_hub_download
        self._hub_download = hub_download
        self.manifest = manifest if manifest is not None else default_manifest()
        self._lock = threading.Lock()
        # The files' digest of each model this process unpacked from a verified archive.
        self._trees: dict[str, str] = {}

    # -- resolution ----------------------------------------------------------------------------
    def fetch(self, model_name: str) -> Path:
        """The local directory of `model_name`; raises ModelUnavailable when it cannot be had."""
        _validate_model_name(model_name)
        with self._lock:
            local = self._find_local(model_name)
            if local is not None:
                return local
            if self.manifest.pinned_sha256(model_name):
                cached = self._fetch_from_bucket(model_name)
                if cached is not None:
                    return cached
            if self._allow_hub:
                return self._fetch_from_hub(model_name)
            self.manifest.expected_sha256(model_name)  # an unpinned model: say so
            where = (
                f"s3://{self._bucket}/{archive_key(model_name)}"
                if self._bucket
                else "the model cache (no bucket configured)"
            )
            raise ModelUnavailable(
                f"model {model_name} is not available: not under {self.local_root}, not in "
                f"{where}, and hub downloads are off ({Env.ALLOW_HUB_DOWNLOAD.value}=false). "
                "Fill the cache with `idp models sync --bucket BUCKET` on a connected machine "
                "or `idp models import-dir NAME DIR --bucket BUCKET` for a local model directory."
            )

    def _find_local(self, model_name: str) -> Path | None:
        """A baked-in or unpacked directory of `model_name`, once its files match the pin."""
        for root in self._search_roots:
            if is_model_dir(root / model_name):
                return self._verified_dir(root / model_name, model_name, where="in the image")
        target = self.local_root / model_name
        if (target / COMPLETE_MARKER).is_file() and is_model_dir(target):
            expected = self._trees.get(model_name) or self.manifest.pinned_tree_sha256(model_name)
            if expected is None:
                # Unpacked by an earlier process, and no pin of its files: fetch it again.
                shutil.rmtree(target)
                return None
            return self._verified_dir(target, model_name, where=f"under {self.local_root}")
        return None

    def _verified_dir(self, path: Path, model_name: str, *, where: str) -> Path:
        """`path` if its files are those pinned (or installed from a verified archive);
        ModelUnavailable naming the model otherwise: a marker or a location is not enough."""
        expected = self._trees.get(model_name) if path.parent == self.local_root else None
        expected = expected or self.manifest.expected_tree_sha256(model_name)
        actual = tree_sha256(path)
        if actual != expected:
            raise ModelUnavailable(
                f"model {model_name}: the directory {where} ({path}) does not match its pin "
                f"(files sha256 {actual}, pinned {expected}); refused"
            )
        return path

    def _fetch_from_bucket(self, model_name: str) -> Path | None:
        if self._s3 is None or not self._bucket:
            return None
        expected = self.manifest.expected_sha256(model_name)
        key = archive_key(model_name)
        self.local_root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.local_root, prefix=".fetch-") as tmp:
            archive = Path(tmp) / "model.tar.gz"
            try:
                self._s3.download_file(self._bucket, key, str(archive))
            except ClientError as exc:
                if is_missing_object(exc):
                    return None
                raise
            where = f"s3://{self._bucket}/{key}"
            return self._install_verified(model_name, archive, expected, where=where)

    def _fetch_from_hub(self, model_name: str) -> Path:
        """PaddleX's download, packed as it comes, installed only if that archive is pinned."""
        expected = self.manifest.expected_hub_sha256(model_name)
        try:
            downloaded = self._hub_download(model_name)
        except Exception as exc:  # any hub failure means "unavailable"
            raise ModelUnavailable(
                f"model {model_name} is not in the model cache and the hub download failed: {exc}"
            ) from exc
        if not is_model_dir(downloaded):
            raise ModelUnavailable(
                f"model {model_name}: the hub download at {downloaded} is not a model directory"
            )
        self.local_root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.local_root, prefix=".hub-") as tmp:
            archive = Path(tmp) / "model.tar.gz"
            pack_model_dir(downloaded, model_name, archive)
            return self._install_verified(
                model_name, archive, expected, where=f"the hub download ({downloaded})"
            )

    def _install_verified(
        self, model_name: str, archive: Path, expected: str, *, where: str
    ) -> Path:
        actual = sha256_file(archive)
        if actual != expected:
            raise ModelUnavailable(
                f"model {model_name}: {where} does not match its pin (sha256 {actual}, pinned "
                f"{expected}); refused. Re-import it with `idp models sync` or "
                "`idp models import-dir`, which write the pin the archive must match."
            )
        staging = archive.parent / "unpacked"
        safe_extract(archive, staging)
        source = staging / model_name if (staging / model_name).is_dir() else staging
        if not is_model_dir(source):
            raise ModelUnavailable(
                f"model {model_name}: {where} holds no model directory (inference.yml + weights)"
            )
        self._trees[model_name] = archive_tree_sha256(archive)
        (source / COMPLETE_MARKER).write_text(actual)
        return self._install(source, model_name)

    def _install(self, source: Path, model_name: str) -> Path:
        target = self.local_root / model_name
        if target.exists():
            shutil.rmtree(target)  # an incomplete earlier attempt (no marker)
        os.replace(source, target)
        return target

    # -- filling the cache -------------------------------------------------------------------
    def has_archive(self, model_name: str) -> bool:
        if self._s3 is None or not self._bucket:
            return False
        try:
            self._s3.head_object(Bucket=self._bucket, Key=archive_key(model_name))
        except ClientError as exc:
            if is_missing_object(exc):
                return False
            raise
        return True

    def import_dir(self, model_name: str, path: Path, *, add_onnx: bool = True) -> ArchiveDigests:
        """Pack a local model dir (`pack_for_cache`) as models/<name>.tar.gz into the bucket;
        returns its digests, the pins the manifest must hold before anything loads it."""
        _validate_model_name(model_name)
        if self._s3 is None or not self._bucket:
            raise ValueError("import_dir needs an S3 client and a model-cache bucket")
        if not is_model_dir(path):
            raise ValueError(f"{path} is not a model directory (inference.yml + weights)")
        with tempfile.TemporaryDirectory(prefix="idp-model-") as tmp:
            archive = Path(tmp) / f"{model_name}.tar.gz"
            pack_for_cache(model_name, path, archive, work_dir=Path(tmp), add_onnx=add_onnx)
            digest = sha256_file(archive)
            tree = archive_tree_sha256(archive)
            self._s3.upload_file(
                str(archive),
                self._bucket,
                archive_key(model_name),
                ExtraArgs={
                    "Metadata": {SHA256_METADATA_KEY: digest},
                    "ContentType": "application/gzip",
                },
            )
        logger.info(
            "imported %s into s3://%s/%s", model_name, self._bucket, archive_key(model_name)
        )
        return ArchiveDigests(sha256=digest, tree_sha256=tree)


def pack_for_cache(
    model_name: str, path: Path, archive: Path, *, work_dir: Path, add_onnx: bool = True
) -> None:
    """The archive of a model dir as the cache holds it (reproducible, so it can be pinned).

    With `add_onnx`, a Paddle model without inference.onnx is exported first when paddle2onnx
    is installed: into the dir itself, so it is done once, or into a copy when the dir is
    read-only. If the export fails the archive goes without it.
    """
    source = path
    if add_onnx and not (path / ONNX_FILE).is_file() and onnx_export_available():
        if not os.access(path, os.W_OK):
            source = work_dir / "staging" / model_name
            shutil.copytree(path, source, symlinks=False)
        export_onnx(source)
    pack_model_dir(source, model_name, archive)


def sync(
    cache: ModelCache,
    model_names: Iterable[str] = DEFAULT_SYNC_MODELS,
    *,
    hub_download: HubDownloader = paddlex_hub_download,
) -> list[ModelPin]:
    """On a connected machine: download each official model with PaddleX and import it.

    Returns the pins to write into the manifest: each archive's sha256, and that of the
    download as it came (what a hub download at run time or an image's baking must match).
    Models already in the bucket are skipped when their pin is known.
    """
    pins: list[ModelPin] = []
    for model_name in model_names:
        if cache.manifest.pinned_sha256(model_name) and cache.has_archive(model_name):
            logger.info("%s is already in the model cache", model_name)
            continue
        path = hub_download(model_name)
        with tempfile.TemporaryDirectory(prefix="idp-hub-") as tmp:
            as_downloaded = Path(tmp) / "hub.tar.gz"
            pack_model_dir(path, model_name, as_downloaded)  # before an ONNX export joins it
            hub_digest = sha256_file(as_downloaded)
        digests = cache.import_dir(model_name, path)
        pins.append(
            ModelPin(
                model_name,
                SYNC_SOURCE,
                sha256=digests.sha256,
                hub_sha256=hub_digest,
                tree_sha256=digests.tree_sha256,
            )
        )
    return pins
