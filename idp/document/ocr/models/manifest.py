"""The model manifest: every model this system may load from the model cache or the hub, pinned
by the sha256 of its archive, and where the archive comes from.

The pins live in the repository (`manifest.json` beside this module), so they ship inside the
code of the processor and the VL server, and only a change to the code can change them. The
model cache verifies every archive against its pin before unpacking it; an archive's own
metadata or a sidecar checksum in the bucket is never trusted, since whoever could replace the
archive could replace those too. A model without a pin is refused: `idp models sync` (run by
an operator with their own credentials) uploads the archives and writes their pins here, to be
committed and deployed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from idp.contract.errors import ModelUnavailable

MANIFEST_PATH: Final = Path(__file__).with_name("manifest.json")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class ModelPin:
    name: str
    source: str  # where the archive's files come from (a wheel, PaddleX's hub)
    sha256: str | None  # of models/<name>.tar.gz; None: not pinned yet, so never loaded
    # Of the archive of PaddleX's hub download as it comes (no ONNX export added): what a hub
    # download at run time or an image's weight baking must match. None: never from the hub.
    hub_sha256: str | None = None
    # Of the unpacked files (archives.tree_sha256): what a directory baked into an image, or one
    # unpacked into /tmp by an earlier process, must match before it is loaded.
    tree_sha256: str | None = None

    def __post_init__(self) -> None:
        for digest in (self.sha256, self.hub_sha256, self.tree_sha256):
            if digest is not None and not _SHA256.match(digest):
                raise ValueError(f"model {self.name}: pin {digest!r} is not a sha256 hex digest")


class ModelManifest:
    """Pins by model name; `expected_sha256` refuses what is not pinned."""

    def __init__(self, pins: Iterable[ModelPin]) -> None:
        self._pins = {pin.name: pin for pin in pins}

    @classmethod
    def load(cls, path: Path = MANIFEST_PATH) -> ModelManifest:
        document = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            ModelPin(
                name=name,
                source=entry["source"],
                sha256=entry.get("sha256"),
                hub_sha256=entry.get("hub_sha256"),
                tree_sha256=entry.get("tree_sha256"),
            )
            for name, entry in document["models"].items()
        )

    def pins(self) -> list[ModelPin]:
        return sorted(self._pins.values(), key=lambda pin: pin.name)

    def pinned_sha256(self, model_name: str) -> str | None:
        pin = self._pins.get(model_name)
        return pin.sha256 if pin else None

    def pinned_tree_sha256(self, model_name: str) -> str | None:
        pin = self._pins.get(model_name)
        return pin.tree_sha256 if pin else None

    def expected_sha256(self, model_name: str) -> str:
        """The pinned digest of `model_name`'s archive, or ModelUnavailable saying why not."""
        pin = self._pins.get(model_name)
        if pin is None or pin.sha256 is None:
            raise _unpinned(model_name, "has no pin" if pin else "is not in the manifest")
        return pin.sha256

    def expected_tree_sha256(self, model_name: str) -> str:
        """The pinned digest of `model_name`'s unpacked files."""
        pin = self._pins.get(model_name)
        if pin is None or pin.tree_sha256 is None:
            raise _unpinned(model_name, "has no pin of its files" if pin else "is not pinned")
        return pin.tree_sha256

    def expected_hub_sha256(self, model_name: str) -> str:
        """The pinned digest of the archive of `model_name`'s hub download, as it comes."""
        pin = self._pins.get(model_name)
        if pin is None or pin.hub_sha256 is None:
            raise _unpinned(model_name, "has no hub pin" if pin else "is not in the manifest")
        return pin.hub_sha256

    def with_pins(self, pins: Iterable[ModelPin]) -> ModelManifest:
        """A copy with `pins` in place of the entries of the same names."""
        return ModelManifest([*self._pins.values(), *pins])

    def write(self, path: Path = MANIFEST_PATH) -> None:
        document = {
            "about": (
                "sha256 of each model archive (models/<name>.tar.gz in the model cache). "
                "Written by `idp models sync` and `idp models import-dir`; a model without a "
                "pin is never loaded."
            ),
            "models": {
                name: {"source": pin.source, "sha256": pin.sha256}
                | ({"tree_sha256": pin.tree_sha256} if pin.tree_sha256 else {})
                | ({"hub_sha256": pin.hub_sha256} if pin.hub_sha256 else {})
                for name, pin in sorted(self._pins.items())
            },
        }
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def _unpinned(model_name: str, state: str) -> ModelUnavailable:
    return ModelUnavailable(
        f"model {model_name} {state} (idp/document/ocr/models/manifest.json), so it is never "
        "loaded from the model cache or the hub. An operator pins it with `idp models sync "
        "--model NAME` (or `idp models import-dir`), then commits the manifest and deploys."
    )


def default_manifest() -> ModelManifest:
    return ModelManifest.load()
