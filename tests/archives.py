"""Archives built in memory for tests: a gzipped tar of given members (and symlinks)."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Mapping


def tar_gz(members: Mapping[str, bytes], links: Mapping[str, str] | None = None) -> bytes:
    """A .tar.gz holding `members` (name → bytes) and symlinks `links` (name → target)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)
    return buffer.getvalue()
