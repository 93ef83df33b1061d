"""The converter's only reach outside its sandbox: HTTPS to the presigned URLs its request
carries (a GET of the input, PUTs of the PDF and the sheets). No credentials, no proxy, and
no scheme but http(s), so a URL cannot name a local file."""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Final
from urllib.parse import urlsplit

from idp.contract.errors import InputNotFound, InputTooLarge

TIMEOUT_SECONDS: Final = 30.0
_CHUNK_BYTES: Final = 1 << 20
# Direct connections only (the emulator on loopback here, S3 or its VPC endpoint on AWS).
_OPENER: Final = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _checked(url: str) -> str:
    if urlsplit(url).scheme not in ("https", "http"):
        raise ValueError("the converter takes only http(s) presigned URLs")
    return url


def download(url: str, *, max_bytes: int) -> bytes:
    """The object behind a presigned GET, at most `max_bytes` (checked before and while
    reading); InputNotFound when it is gone."""
    try:
        response = _OPENER.open(_checked(url), timeout=TIMEOUT_SECONDS)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            raise InputNotFound("the job's input no longer exists") from None
        raise
    with response:
        declared = int(response.headers.get("Content-Length") or 0)
        if declared > max_bytes:
            raise _too_large(declared, max_bytes)
        parts, size = [], 0
        while chunk := response.read(_CHUNK_BYTES):
            size += len(chunk)
            if size > max_bytes:
                raise _too_large(size, max_bytes)
            parts.append(chunk)
    return b"".join(parts)


def upload(url: str, body: bytes, *, content_type: str) -> None:
    """`body` to a presigned PUT, with the Content-Type it was signed for."""
    request = urllib.request.Request(  # noqa: S310 - the scheme is checked
        _checked(url), data=body, method="PUT", headers={"Content-Type": content_type}
    )
    with _OPENER.open(request, timeout=TIMEOUT_SECONDS):
        pass


def _too_large(size: int, max_bytes: int) -> InputTooLarge:
    return InputTooLarge(
        f"the input is at least {size} bytes; the limit is {max_bytes} bytes "
        "(setting MAX_INPUT_BYTES)"
    )
