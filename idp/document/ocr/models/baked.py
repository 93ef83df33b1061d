"""Models baked into an image, checked against their pins: every model directory under a root
must hold the files its manifest entry pins (`tree_sha256`), or the image is refused.

Run at build time (`python -m idp.document.ocr.models.baked /opt/models` in the Dockerfiles)
so an image with an unpinned or altered model is never built; the model cache checks each
directory again when it first loads it at start-up (idp.document.ocr.models.cache).
"""

from __future__ import annotations

import sys
from pathlib import Path

from idp.contract.errors import ModelUnavailable
from idp.document.ocr.models.archives import tree_sha256
from idp.document.ocr.models.manifest import ModelManifest, default_manifest


def check_baked(root: Path, manifest: ModelManifest | None = None) -> list[str]:
    """The names of the model directories under `root`, each matching its pin; the first that
    does not raises ModelUnavailable naming it."""
    manifest = manifest if manifest is not None else default_manifest()
    names = []
    for path in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        expected = manifest.expected_tree_sha256(path.name)
        actual = tree_sha256(path)
        if actual != expected:
            raise ModelUnavailable(
                f"model {path.name}: the directory baked at {path} does not match its pin "
                f"(files sha256 {actual}, pinned {expected}); refused"
            )
        names.append(path.name)
    return names


def main(argv: list[str]) -> int:
    for root in argv:
        try:
            names = check_baked(Path(root))
        except ModelUnavailable as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        print(f"{root}: {len(names)} model(s) match their pins: {', '.join(names) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
