"""Print the CA certificates pip on this machine trusts beyond the public (Mozilla) roots.

Image builds pass them in as a build argument when the network inspects TLS: pip inside the
build must trust the same CAs as pip on the host. Prints nothing where pip uses the public roots.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

_MOZILLA = Path("/usr/share/ca-certificates/mozilla")
_PEM = re.compile(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.DOTALL)


def _certificates(text: str) -> list[str]:
    return [re.sub(r"\s+", "", block) for block in _PEM.findall(text)]


def _host_bundle() -> Path | None:
    configured = os.environ.get("PIP_CERT")
    if not configured:
        listing = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        match = re.search(r"^[\w:.]*\bcert='([^']+)'", listing, re.MULTILINE)
        configured = match.group(1) if match else None
    return Path(configured) if configured else None


def _public_roots() -> set[str]:
    """Mozilla's roots as the OS ships them (Debian's ca-certificates), else certifi's."""
    shipped = sorted(_MOZILLA.glob("*.crt")) if _MOZILLA.is_dir() else []
    if shipped:
        return {cert for path in shipped for cert in _certificates(path.read_text())}
    from pip._vendor import certifi

    return set(_certificates(Path(certifi.where()).read_text()))


def main() -> None:
    bundle = _host_bundle()
    if bundle is None or not bundle.is_file():
        return
    public = _public_roots()
    text = bundle.read_text()
    for block in _PEM.findall(text):
        if re.sub(r"\s+", "", block) not in public:
            print(block)


if __name__ == "__main__":
    main()
