"""Model directories as archives: a reproducible tar.gz, its sha256, and an unpacking that
refuses anything but regular files inside its destination."""

from __future__ import annotations

import gzip
import hashlib
import tarfile
from pathlib import Path
from typing import Final

from idp.contract.errors import ModelUnavailable

MAX_UNPACKED_BYTES: Final = 8 * 1024**3  # refuse archives that would unpack beyond this
# Written into a model dir once it is completely unpacked; never packed itself.
COMPLETE_MARKER: Final = ".idp-model-complete"
_CHUNK: Final = 1024 * 1024


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def tree_sha256(path: Path) -> str:
    """The digest of a model directory's files: sha256 over each regular file's path and
    sha256, in order (links and the completion marker left out, as the archive leaves them).
    The same files give the same digest however they were unpacked, so a directory baked into
    an image or unpacked into /tmp can be checked against its pin without packing it again."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink()):
        relative = file.relative_to(path).as_posix()
        if relative == COMPLETE_MARKER:
            continue
        digest.update(f"{relative}\0{sha256_file(file)}\n".encode())
    return digest.hexdigest()


def archive_tree_sha256(archive: Path) -> str:
    """`tree_sha256` of the files an archive of `pack_model_dir` unpacks to, read from the
    archive itself (its members sit under `<model_name>/`)."""
    files: list[tuple[str, str]] = []
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            if not member.isfile():
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            digest = hashlib.sha256()
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
            files.append((member.name.split("/", 1)[-1], digest.hexdigest()))
    tree = hashlib.sha256()
    for relative, digest_hex in sorted(files):
        if relative != COMPLETE_MARKER:
            tree.update(f"{relative}\0{digest_hex}\n".encode())
    return tree.hexdigest()


def pack_model_dir(path: Path, model_name: str, archive: Path) -> None:
    """A reproducible tar.gz with every regular file under `<model_name>/` (links skipped):
    the same files make the same bytes."""

    def normalize(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0
        info.mode = 0o644  # whatever the checkout's umask made
        return info

    # gzip's header would carry the time and the file name: fixed here, so the same files
    # always make the same bytes and an archive can be pinned by its sha256 (manifest.py).
    with (
        archive.open("wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) as packed,
        tarfile.open(fileobj=packed, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for file in sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink()):
            relative = file.relative_to(path)
            if relative.name == COMPLETE_MARKER:
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
