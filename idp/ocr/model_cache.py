"""The model cache: resolve a PaddleOCR model name to a local model directory.

Order: unpacked locally (baked into the image or left by an earlier invocation in /tmp) →
archive `models/<name>.tar.gz` in the model-cache bucket (sha256-verified, safely unpacked) →
PaddleX's own hub download, only where allowed, uploaded back so the next cold start skips
the hub. A model found nowhere fails fast with MODEL_UNAVAILABLE naming it.

    python -m idp.ocr.model_cache --bucket B import-dir MODEL_NAME .models/MODEL_NAME
    python -m idp.ocr.model_cache --bucket B sync [--models NAME ...]
    python -m idp.ocr.model_cache add-onnx .models/MODEL_NAME ...

Archives carry an ONNX export of the same weights (inference.onnx, made with paddle2onnx
where it is installed) so the processor can run them on ONNX Runtime.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import ClientError

from idp import names
from idp.errors import ModelUnavailable

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

logger = logging.getLogger(__name__)

DEFAULT_LOCAL_ROOT: Final = Path("/tmp/models")  # noqa: S108 - Lambda's only writable disk
SHA256_METADATA_KEY: Final = "sha256"  # x-amz-meta-sha256 on the archive object
SHA256_SIDECAR_SUFFIX: Final = ".sha256"  # or models/<name>.tar.gz.sha256 next to it
MAX_UNPACKED_BYTES: Final = 8 * 1024**3  # refuse archives that would unpack beyond this
_COMPLETE_MARKER: Final = ".idp-model-complete"
ONNX_FILE: Final = "inference.onnx"
ONNX_OPSET: Final = 11
_CHUNK: Final = 1024 * 1024

# Models `sync` fetches by default: PP-OCRv5 (CPU processor), PP-StructureV3's sub-models as
# configured in paddlex's PP-StructureV3.yaml, and PaddleOCR-VL (GPU endpoint).
PP_OCRV5_MODELS: Final = (
    "PP-OCRv5_mobile_det",
    "PP-OCRv5_mobile_rec",
    "PP-OCRv5_server_det",
    "PP-OCRv5_server_rec",
    "en_PP-OCRv5_mobile_rec",
    "latin_PP-OCRv5_mobile_rec",
    "eslav_PP-OCRv5_mobile_rec",
    "korean_PP-OCRv5_mobile_rec",
    "PP-LCNet_x1_0_textline_ori",
    "PP-LCNet_x1_0_doc_ori",
    "UVDoc",
)
PP_STRUCTUREV3_MODELS: Final = (
    "PP-DocLayout_plus-L",
    "PP-DocBlockLayout",
    "PP-LCNet_x1_0_table_cls",
    "SLANeXt_wired",
    "SLANet_plus",
    "RT-DETR-L_wired_table_cell_det",
    "RT-DETR-L_wireless_table_cell_det",
    "PP-FormulaNet_plus-L",
)
# The models of the VL container's default pipeline version.
PADDLEOCR_VL_MODELS: Final = names.VL_PIPELINE_MODELS[names.VL_DEFAULT_PIPELINE_VERSION]
DEFAULT_SYNC_MODELS: Final = PP_OCRV5_MODELS + PP_STRUCTUREV3_MODELS + PADDLEOCR_VL_MODELS


def archive_key(model_name: str) -> str:
    return f"{names.MODEL_CACHE_PREFIX}{model_name}.tar.gz"


def is_model_dir(path: Path) -> bool:
    """A directory PaddleX can load: a config plus weights in one of its formats."""
    if not path.is_dir():
        return False
    has_config = (path / "inference.yml").is_file() or (path / "config.json").is_file()
    has_weights = any(
        (path / name).is_file()
        for name in ("inference.pdiparams", "inference.onnx", "model.safetensors")
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
    """Resolves model names to local dirs; takes its S3 client, creates none.

    `search_roots` are read-only places checked first (e.g. models baked into the image);
    `local_root` is where archives are unpacked (on Lambda: under /tmp).
    """

    def __init__(
        self,
        *,
        s3: S3Client | None,
        bucket: str | None,
        local_root: Path = DEFAULT_LOCAL_ROOT,
        search_roots: Sequence[Path] = (),
        allow_hub_download: bool = False,
        hub_download: HubDownloader = paddlex_hub_download,
    ) -> None:
        self._s3 = s3
        self._bucket = bucket
        self.local_root = local_root
        self._search_roots = tuple(search_roots)
        self._allow_hub = allow_hub_download
        self._hub_download = hub_download
        self._lock = threading.Lock()

    # -- resolution ----------------------------------------------------------------------------
    def fetch(self, model_name: str) -> Path:
        """The local directory of `model_name`; raises ModelUnavailable when it cannot be had."""
        _validate_model_name(model_name)
        with self._lock:
            local = self._find_local(model_name)
            if local is not None:
                return local
            cached = self._fetch_from_bucket(model_name)
            if cached is not None:
                return cached
            if self._allow_hub:
                return self._fetch_from_hub(model_name)
            where = (
                f"s3://{self._bucket}/{archive_key(model_name)}"
                if self._bucket
                else "the model cache (no bucket configured)"
            )
            raise ModelUnavailable(
                f"model {model_name} is not available: not under {self.local_root}, not in "
                f"{where}, and hub downloads are off ({names.Env.ALLOW_HUB_DOWNLOAD.value}=false). "
                "Fill the cache with `idp models sync --bucket BUCKET` on a connected machine "
                "or `idp models import-dir NAME DIR --bucket BUCKET` for a local model directory."
            )

    def _find_local(self, model_name: str) -> Path | None:
        for root in self._search_roots:
            if is_model_dir(root / model_name):
                return root / model_name
        target = self.local_root / model_name
        if (target / _COMPLETE_MARKER).is_file() and is_model_dir(target):
            return target
        return None

    def _fetch_from_bucket(self, model_name: str) -> Path | None:
        if self._s3 is None or not self._bucket:
            return None
        key = archive_key(model_name)
        try:
            head = self._s3.head_object(Bucket=self._bucket, Key=key)
        except ClientError as exc:
            if _is_not_found(exc):
                return None
            raise
        expected = head.get("Metadata", {}).get(SHA256_METADATA_KEY) or self._sidecar_digest(key)
        if not expected:
            raise ModelUnavailable(
                f"model {model_name}: s3://{self._bucket}/{key} carries no sha256 "
                f"(object metadata '{SHA256_METADATA_KEY}' or a '{SHA256_SIDECAR_SUFFIX}' "
                "sidecar); re-upload it with `python -m idp.ocr.model_cache import-dir`"
            )
        self.local_root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.local_root, prefix=".fetch-") as tmp:
            archive = Path(tmp) / "model.tar.gz"
            self._s3.download_file(self._bucket, key, str(archive))
            actual = sha256_file(archive)
            if actual != expected.strip().lower():
                raise ModelUnavailable(
                    f"model {model_name}: s3://{self._bucket}/{key} failed verification "
                    f"(sha256 {actual}, expected {expected}); re-import it"
                )
            staging = Path(tmp) / "unpacked"
            safe_extract(archive, staging)
            source = staging / model_name if (staging / model_name).is_dir() else staging
            if not is_model_dir(source):
                raise ModelUnavailable(
                    f"model {model_name}: s3://{self._bucket}/{key} holds no model directory "
                    "(inference.yml + weights)"
                )
            (source / _COMPLETE_MARKER).write_text(actual)
            return self._install(source, model_name)

    def _sidecar_digest(self, key: str) -> str | None:
        assert self._s3 is not None
        assert self._bucket
        try:
            body = self._s3.get_object(Bucket=self._bucket, Key=key + SHA256_SIDECAR_SUFFIX)
        except ClientError as exc:
            if _is_not_found(exc):
                return None
            raise
        text = body["Body"].read().decode("ascii", "replace").strip()
        return text.split()[0] if text else None

    def _fetch_from_hub(self, model_name: str) -> Path:
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
        if self._s3 is not None and self._bucket:
            try:
                self.import_dir(model_name, downloaded)
            except (ClientError, OSError) as exc:
                # The job can still run; only the next cold start loses the shortcut.
                logger.warning("could not upload %s to the model cache: %s", model_name, exc)
        return downloaded

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
            if _is_not_found(exc):
                return False
            raise
        return True

    def import_dir(self, model_name: str, path: Path, *, add_onnx: bool = True) -> str:
        """Pack a local model dir as models/<name>.tar.gz into the bucket; returns its sha256.

        With `add_onnx`, a Paddle model without inference.onnx is exported first when
        paddle2onnx is installed: into the dir itself, so it is done once, or into a copy when
        the dir is read-only. If the export fails the archive goes without it.
        """
        _validate_model_name(model_name)
        if self._s3 is None or not self._bucket:
            raise ValueError("import_dir needs an S3 client and a model-cache bucket")
        if not is_model_dir(path):
            raise ValueError(f"{path} is not a model directory (inference.yml + weights)")
        with tempfile.TemporaryDirectory(prefix="idp-model-") as tmp:
            source = path
            if add_onnx and not (path / ONNX_FILE).is_file() and onnx_export_available():
                if not os.access(path, os.W_OK):
                    source = Path(tmp) / "staging" / model_name
                    shutil.copytree(path, source, symlinks=False)
                export_onnx(source)
            archive = Path(tmp) / f"{model_name}.tar.gz"
            pack_model_dir(source, model_name, archive)
            digest = sha256_file(archive)
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
        return digest


def onnx_export_available() -> bool:
    return importlib.util.find_spec("paddle2onnx") is not None


def export_onnx(model_dir: Path, *, timeout_s: float = 900) -> bool:
    """Add inference.onnx (the same weights, via paddle2onnx) to a Paddle model dir.

    Runs in a child process (paddle2onnx imports paddle). Returns False when the model cannot
    be exported (no converter, no Paddle program, or an operator it does not support).
    """
    if (model_dir / ONNX_FILE).is_file():
        return True
    program = next(
        (
            model_dir / name
            for name in ("inference.json", "inference.pdmodel")
            if (model_dir / name).is_file()
        ),
        None,
    )
    if program is None or not (model_dir / "inference.pdiparams").is_file():
        return False
    if not onnx_export_available():
        return False
    with tempfile.TemporaryDirectory(prefix="idp-onnx-") as tmp:
        target = Path(tmp) / ONNX_FILE
        command = [
            sys.executable,
            "-c",
            "import sys; from paddle2onnx.command import main; sys.argv[0] = 'paddle2onnx'; main()",
            "--model_dir",
            str(model_dir),
            "--model_filename",
            program.name,
            "--params_filename",
            "inference.pdiparams",
            "--save_file",
            str(target),
            "--opset_version",
            str(ONNX_OPSET),
        ]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout_s, check=False
            )
        except subprocess.TimeoutExpired:
            logger.warning("paddle2onnx timed out on %s", model_dir)
            return False
        if done.returncode != 0 or not target.is_file():
            logger.warning("paddle2onnx could not export %s: %s", model_dir, done.stderr[-2000:])
            return False
        shutil.move(str(target), str(model_dir / ONNX_FILE))
    return True


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def pack_model_dir(path: Path, model_name: str, archive: Path) -> None:
    """A reproducible tar.gz with every regular file under `<model_name>/` (links skipped)."""

    def normalize(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0
        return info

    with tarfile.open(archive, "w:gz", compresslevel=6) as tar:
        for file in sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink()):
            relative = file.relative_to(path)
            if relative.name == _COMPLETE_MARKER:
                continue
            tar.add(file, arcname=f"{model_name}/{relative.as_posix()}", filter=normalize)


def safe_extract(archive: Path, dest: Path, *, max_bytes: int = MAX_UNPACKED_BYTES) -> None:
    """Unpack only regular files and dirs that stay inside `dest`, within a size budget."""
    dest.mkdir(parents=True, exist_ok=True)
    total = 0
    with tarfile.open(archive, "r:gz") as tar:
        members = tar.getmembers()
        for member in members:
            name = member.name
            if name.startswith("/") or ".." in Path(name).parts:
                raise ModelUnavailable(f"unsafe path {name!r} in model archive {archive.name}")
            if not (member.isfile() or member.isdir()):
                raise ModelUnavailable(
                    f"model archive {archive.name} holds a link or device ({name!r}); refused"
                )
            total += member.size
            if total > max_bytes:
                raise ModelUnavailable(
                    f"model archive {archive.name} unpacks beyond {max_bytes} bytes; refused"
                )
        # The "data" filter re-checks paths and strips modes/owners (PEP 706). Pythons before
        # 3.11.4 (Debian 12's 3.11.2 among them) lack it; the checks above still hold there.
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, members=members, filter="data")
        else:  # pragma: no cover - exercised by the image test on Debian's Python
            tar.extractall(dest, members=members)  # noqa: S202 - members checked above


def _is_not_found(exc: ClientError) -> bool:
    error = exc.response.get("Error", {})
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return error.get("Code") in ("404", "NoSuchKey", "NotFound") or status == 404


def sync(
    cache: ModelCache,
    model_names: Iterable[str] = DEFAULT_SYNC_MODELS,
    *,
    hub_download: HubDownloader = paddlex_hub_download,
) -> dict[str, str]:
    """On a connected machine: download each official model with PaddleX and import it.

    Returns {model name: archive sha256}. Models already in the bucket are skipped.
    """
    imported: dict[str, str] = {}
    for model_name in model_names:
        if cache.has_archive(model_name):
            logger.info("%s is already in the model cache", model_name)
            continue
        path = hub_download(model_name)
        imported[model_name] = cache.import_dir(model_name, path)
    return imported


def _s3_client() -> Any:
    import boto3

    return boto3.client("s3", endpoint_url=os.environ.get(names.Env.AWS_ENDPOINT_URL.value))


def main(argv: Sequence[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(
        prog="python -m idp.ocr.model_cache", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--bucket",
        default=os.environ.get(names.Env.MODEL_CACHE_BUCKET.value),
        help=f"model-cache bucket (default: ${names.Env.MODEL_CACHE_BUCKET.value})",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    import_cmd = commands.add_parser("import-dir", help="upload a local model directory")
    import_cmd.add_argument("model_name")
    import_cmd.add_argument("path", type=Path)
    sync_cmd = commands.add_parser("sync", help="download official models and import them")
    sync_cmd.add_argument("--models", nargs="+", default=list(DEFAULT_SYNC_MODELS))
    onnx_cmd = commands.add_parser("add-onnx", help="export inference.onnx into model dirs")
    onnx_cmd.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args(argv)
    if args.command == "add-onnx":
        failed = [str(path) for path in args.paths if not export_onnx(path)]
        if failed:
            raise SystemExit(f"could not export: {', '.join(failed)} (is paddle2onnx installed?)")
        return
    if not args.bucket:
        parser.error(f"--bucket or ${names.Env.MODEL_CACHE_BUCKET.value} is required")
    cache = ModelCache(s3=_s3_client(), bucket=args.bucket)
    if args.command == "import-dir":
        digest = cache.import_dir(args.model_name, args.path)
        print(f"{args.model_name}\ts3://{args.bucket}/{archive_key(args.model_name)}\t{digest}")
    else:
        for model_name, digest in sync(cache, args.models).items():
            print(f"{model_name}\ts3://{args.bucket}/{archive_key(model_name)}\t{digest}")


if __name__ == "__main__":
    main()
