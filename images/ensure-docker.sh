#!/usr/bin/env bash
# Make sure a Docker engine answers, installing Debian's docker.io and debootstrap where they
# are missing and starting the daemon (as root). Used by .ci/run before `make image-test`.
set -euo pipefail
if docker info >/dev/null 2>&1 && command -v debootstrap >/dev/null; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-docker: no Docker engine answers, and only root can install and start one" >&2
    exit 1
fi
if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null
fi
if ! docker info >/dev/null 2>&1; then
    nohup dockerd >/var/log/dockerd.log 2>&1 &
    for _ in $(seq 60); do
        docker info >/dev/null 2>&1 && break
        sleep 1
    done
fi
docker info >/dev/null 2>&1 || { echo "ensure-docker: dockerd did not start (see /var/log/dockerd.log)" >&2; exit 1; }
echo "ensure-docker: Docker engine $(docker info --format '{{.ServerVersion}}') is running"
