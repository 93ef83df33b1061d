"""Image tests run only under `make image-test`, which builds the images and names them here.

Without Docker or without a built image they fail with the reason; they never pass by skipping.
"""

from __future__ import annotations

import os

import pytest

from devkit.local.lambda_container import DockerUnavailable, require_docker

PROCESSOR_IMAGE_ENV = "IDP_PROCESSOR_IMAGE"
VL_CPU_IMAGE_ENV = "IDP_VL_CPU_IMAGE"
CONVERTER_IMAGE_ENV = "IDP_CONVERTER_IMAGE"


def _image(variable: str) -> str:
    try:
        require_docker()
    except DockerUnavailable as exc:
        pytest.fail(f"the image tests need a running Docker engine: {exc}")
    image = os.environ.get(variable)
    if not image:
        pytest.fail(f"{variable} is not set: run `make image-test`, which builds the image first")
    return image


@pytest.fixture(scope="session")
def processor_image() -> str:
    return _image(PROCESSOR_IMAGE_ENV)


@pytest.fixture(scope="session")
def vl_cpu_image() -> str:
    return _image(VL_CPU_IMAGE_ENV)


@pytest.fixture(scope="session")
def converter_image() -> str:
    return _image(CONVERTER_IMAGE_ENV)
