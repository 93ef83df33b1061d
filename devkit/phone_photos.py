"""Real HEIC photos for the tests, from pillow-heif's own test suite (its PyPI sdist), pinned by
version and sha256 (archive and member), fetched with pip and cached under CACHE_DIR (git-ignored).
Nothing is vendored.

Licence: pillow-heif is BSD-3-Clause ("Copyright (c) 2021-2023, Pillow-Heif contributors"); its
test images ship in the sdist under that licence.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from devkit.pinned_sdists import PinnedFileError, checked, member_bytes, sdist_bytes

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


PhotoError = PinnedFileError


def _sdist(cache: Path) -> bytes:
    return sdist_bytes(SDIST_REQUIREMENT, SDIST, SDIST_SHA256, cache)


def photo_bytes(key: str, cache: Path = CACHE_DIR) -> bytes:
    """The photo's bytes, checked against its pin (the sdist fetched on first use)."""
    photo = PHOTOS[key]
    out = cache / "photos" / Path(photo.member).name
    if out.exists():
        return checked(out.read_bytes(), photo.sha256, photo.member)

    member = f"{SDIST.removesuffix('.tar.gz')}/{photo.member}"
    data = member_bytes(_sdist(cache), member, photo.sha256, what=SDIST)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    return data
