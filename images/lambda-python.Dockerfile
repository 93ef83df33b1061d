# A stand-in for the AWS Lambda Python base image (public.ecr.aws/lambda/python), built from
# Debian's packages where that registry cannot be reached. It keeps the contract the processor
# image relies on: Python on PATH with pip, LAMBDA_TASK_ROOT=/var/task on sys.path first, the
# runtime interface client (awslambdaric, the same client the Lambda base runs), and an
# entrypoint that takes the handler as its one argument. What differs is listed in
# images/README.md (Debian's Python 3.11 instead of 3.12, apt instead of dnf, no RIE).
#   docker build -f images/lambda-python.Dockerfile -t paddle-idp-standin/lambda-python:3.11 images
ARG DEBIAN_IMAGE=paddle-idp-standin/debian:bookworm
FROM ${DEBIAN_IMAGE} AS runtime-client
# PEM text of CAs pip must trust beyond the public roots (a TLS-inspecting network; see
# images/extra_ca_certs.py). Used in this build stage only, never part of the final image.
ARG PIP_EXTRA_CA_CERTS=""
ARG AWSLAMBDARIC_VERSION=4.2.2
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# hadolint ignore=DL4006
RUN python3 -m venv /var/lang \
 && printf '%s\n' "${PIP_EXTRA_CA_CERTS}" \
    | cat "$(/var/lang/bin/python -c 'import pip._vendor.certifi as c; print(c.where())')" - \
    > /tmp/pip-ca.pem \
 && PIP_CERT=/tmp/pip-ca.pem /var/lang/bin/pip install --no-cache-dir \
    "awslambdaric==${AWSLAMBDARIC_VERSION}" \
 && rm /tmp/pip-ca.pem

FROM ${DEBIAN_IMAGE}
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=runtime-client /var/lang /var/lang
COPY lambda-entrypoint.sh /lambda-entrypoint.sh
ENV LAMBDA_TASK_ROOT=/var/task \
    LAMBDA_RUNTIME_DIR=/var/runtime \
    PATH=/var/lang/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONPATH=/var/task \
    LANG=en_US.UTF-8 \
    TZ=:/etc/localtime
RUN chmod 0755 /lambda-entrypoint.sh && mkdir -p /var/task /var/runtime
WORKDIR /var/task
ENTRYPOINT ["/lambda-entrypoint.sh"]
