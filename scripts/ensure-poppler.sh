#!/usr/bin/env bash
# poppler-utils (pdftotext, pdfinfo): the tests read the searchable PDF with an extractor of its
# own. Installs Debian's package when pdftotext is missing; does nothing when it is there.
set -euo pipefail
if command -v pdftotext >/dev/null 2>&1; then
    exit 0
fi
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    echo "pdftotext is missing: install poppler-utils (apt-get install poppler-utils)" >&2
    exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends poppler-utils >/dev/null
