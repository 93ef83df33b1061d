# A stand-in for the VL image's CUDA base (vllm/vllm-openai): Debian's Python with venv and the
# apt package manager, so sagemaker_container/Dockerfile can run its Paddle-side steps on CPU.
#   docker build -f images/python.Dockerfile -t paddle-idp-standin/python:3.11 images
ARG DEBIAN_IMAGE=paddle-idp-standin/debian:bookworm
FROM ${DEBIAN_IMAGE}
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s /usr/bin/python3 /usr/local/bin/python
