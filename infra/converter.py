"""The Office converter: a container-image Lambda (Debian, LibreOffice headless) that the
processor invokes synchronously for each Office document. Its role holds no S3, KMS or table
grant: it reads the input and writes the job's converted PDF through presigned URLs that the
processor signs for that one job, so a document that subverts LibreOffice reaches nothing else
(docs/security.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from infra.image_function import ImageFunction


class OfficeConverter(ImageFunction):
    """DockerImageFunction built from office_converter_image/ (build context: the repo root).

    Invoked synchronously (the processor waits for the PDF), so a failure is the caller's to
    record: no retries, no destination.
    """

    dockerfile = "office_converter_image/Dockerfile"
    description = "Converts one Office document to PDF (LibreOffice) for the processor"
    # LibreOffice's profile and scratch files go to /tmp.
    writable_home: ClassVar[Mapping[str, str]] = {"HOME": "/tmp"}  # noqa: S108
    no_dead_letter_queue = (
        "Invoked synchronously by the processor, which records the converter's error on the "
        "job; an asynchronous DLQ would never receive anything."
    )
