#!/bin/sh
# The Lambda base image's entrypoint contract: the handler is the one argument (the image CMD);
# the runtime interface client then polls the Runtime API at $AWS_LAMBDA_RUNTIME_API.
if [ $# -ne 1 ]; then
    echo "entrypoint requires the handler name to be the first argument" 1>&2
    exit 142
fi
export _HANDLER="$1"
if [ -z "${AWS_LAMBDA_RUNTIME_API:-}" ]; then
    echo "AWS_LAMBDA_RUNTIME_API is not set: run this image under a Lambda Runtime API" 1>&2
    exit 142
fi
cd "${LAMBDA_TASK_ROOT}" || exit 1
exec python -m awslambdaric "$_HANDLER"
