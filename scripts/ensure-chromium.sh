#!/usr/bin/env bash
# chromium and chromium-driver (Debian): the tests open result.html in a real headless browser.
# Installs Debian's packages when either is missing; does nothing when both are there.
set -euo pipefail
if [[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]]; then
    exit 0
fi
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    echo "chromium is missing: install chromium and chromium-driver (apt-get install ...)" >&2
    exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    chromium chromium-driver >/dev/null
