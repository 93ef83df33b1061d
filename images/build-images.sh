#!/usr/bin/env bash
# Build what `make image-test` runs: the processor image on a stand-in of the Lambda Python
# base, and the CPU twin of the VL image on a stand-in of its CUDA base (images/README.md).
#   images/build-images.sh PROCESSOR_IMAGE VL_CPU_IMAGE CONVERTER_IMAGE
# and the Office converter image on the Debian base (its base in the cloud too: Debian).
set -euo pipefail
cd "$(dirname "$0")/.."
processor_image="$1"
vl_cpu_image="$2"
converter_image="$3"
debian=paddle-idp-standin/debian:bookworm
lambda_python=paddle-idp-standin/lambda-python:3.11
python_base=paddle-idp-standin/python:3.11

if ! command -v docker >/dev/null; then
    echo "make image-test needs Docker: the docker CLI is not installed (.ci/run installs Debian's docker.io)" >&2
    exit 1
fi
if ! docker info >/dev/null 2>&1; then
    echo "make image-test needs a running Docker engine: \`docker info\` gets no answer (start dockerd, or run images/ensure-docker.sh as root)" >&2
    exit 1
fi

# Container registries are unreachable: builds run on the host network, and pip inside them
# trusts the extra CAs pip on this host trusts (none where TLS is not inspected).
extra_ca="$(python3 images/extra_ca_certs.py)"
log_dir="$(mktemp -d)"
build() {
    local what="$1"; shift
    local started=$SECONDS
    echo "image-test: building $what"
    if ! docker build --network host --build-arg PIP_EXTRA_CA_CERTS="$extra_ca" "$@" \
            >"$log_dir/build.log" 2>&1; then
        tail -n 60 "$log_dir/build.log" >&2
        echo "image-test: building $what failed" >&2
        exit 1
    fi
    echo "image-test: built $what in $((SECONDS - started)) s"
}

images/build-debian-base.sh "$debian"
build "$lambda_python (stand-in for the Lambda Python base)" \
    -f images/lambda-python.Dockerfile --build-arg DEBIAN_IMAGE="$debian" -t "$lambda_python" images
build "$python_base (stand-in for the vLLM CUDA base)" \
    -f images/python.Dockerfile --build-arg DEBIAN_IMAGE="$debian" -t "$python_base" images
build "$processor_image" \
    -f ocr_processor_image/Dockerfile --build-arg BASE_IMAGE="$lambda_python" \
    -t "$processor_image" .
build "$converter_image" \
    -f office_converter_image/Dockerfile --build-arg BASE_IMAGE="$debian" \
    -t "$converter_image" .
build "$vl_cpu_image (CPU twin of the VL image)" \
    -f sagemaker_container/Dockerfile --build-arg VLLM_IMAGE="$python_base" \
    --build-arg PADDLE_PACKAGE=paddlepaddle==3.2.2 \
    --build-arg PADDLE_INDEX_URL=https://pypi.org/simple \
    -t "$vl_cpu_image" .
rm -rf "$log_dir"
