#!/usr/bin/env bash
# Make the Debian base image the stand-in images build on, from Debian's own packages:
# container registries are unreachable here, so no base image can be pulled.
#   images/build-debian-base.sh [IMAGE]      (needs root, debootstrap and a Docker engine)
set -euo pipefail
image="${1:-paddle-idp-standin/debian:bookworm}"
if docker image inspect "$image" >/dev/null 2>&1; then
    echo "base image $image already exists"
    exit 0
fi
command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install debootstrap" >&2; exit 1; }
rootfs="$(mktemp -d)"
trap 'rm -rf "$rootfs"' EXIT
debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >/dev/null
tar -C "$rootfs" -c . | docker import - "$image" >/dev/null
echo "built base image $image"
