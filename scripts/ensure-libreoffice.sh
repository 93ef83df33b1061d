#!/usr/bin/env bash
# LibreOffice without a GUI and the metric-compatible fonts: the local run converts Office
# documents with the same handler as the converter image, using the host's soffice. Installs
# Debian's packages when soffice is missing; does nothing when it is there.
set -euo pipefail
if command -v soffice >/dev/null 2>&1; then
    exit 0
fi
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    echo "soffice is missing: install LibreOffice (apt-get install libreoffice-core-nogui" \
        "libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui" \
        "fonts-crosextra-carlito fonts-crosextra-caladea fonts-liberation2 fonts-noto-cjk)" >&2
    exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    libreoffice-core-nogui libreoffice-writer-nogui libreoffice-calc-nogui \
    libreoffice-impress-nogui fonts-crosextra-carlito fonts-crosextra-caladea \
    fonts-liberation2 fonts-noto-cjk >/dev/null
