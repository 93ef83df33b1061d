"""What a document asks LibreOffice to do beyond showing itself is not done by the converter: a
picture linked from a server is not fetched, a section linked to a local file is not read, a
macro bound to the load event does not run."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from pypdf import PdfReader

from idp.contract.names import MediaType
from idp.document.office.libreoffice import LibreOffice, soffice_path
from tests.idp.document.office import files

SECRET = "TOPSECRET-LINKED-FILE-TEXT"


class _Recorder(BaseHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def _record(self) -> None:
        type(self).requests.append(f"{self.command} {self.path}")
        self.send_response(404)
        self.end_headers()

    do_GET = do_HEAD = do_OPTIONS = do_PROPFIND = _record  # noqa: N815

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server that records every request it gets."""
    _Recorder.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", _Recorder.requests
    finally:
        httpd.shutdown()
        httpd.server_close()


def _text(pdf: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)


def test_linked_content_is_never_fetched_and_macros_never_run(
    server: tuple[str, list[str]], tmp_path: Path
) -> None:
    # GIVEN a document that links a picture from a server, a section from a local file and a
    # macro to its load event
    url, requests = server
    linked = tmp_path / "linked.txt"
    linked.write_text(SECRET)
    marker = tmp_path / "macro-ran"
    document = files.untrusted_odt(
        image_url=f"{url}/picture.png", linked_file=linked, macro_marker=marker
    )

    # WHEN the converter converts it
    work = tmp_path / "work"
    work.mkdir()
    converted = LibreOffice(soffice=soffice_path(), work_root=work).convert(document, MediaType.ODT)

    # THEN the PDF shows the document's own text and its cached section, and nothing was fetched,
    # read or run
    text = _text(converted.pdf)
    assert "Visible text of the document." in text
    assert "Cached section text." in text
    assert SECRET not in text
    assert requests == []
    assert not marker.exists()


def test_without_the_converters_profile_libreoffice_fetches_the_linked_picture(
    server: tuple[str, list[str]], tmp_path: Path
) -> None:
    # GIVEN the same document, converted by LibreOffice with a profile of its defaults (the
    # control: what the converter's profile and environment prevent)
    import subprocess

    url, requests = server
    source = tmp_path / "document.odt"
    source.write_bytes(
        files.untrusted_odt(
            image_url=f"{url}/picture.png",
            linked_file=tmp_path / "linked.txt",
            macro_marker=tmp_path / "macro-ran",
        )
    )
    subprocess.run(
        [
            soffice_path(),
            f"-env:UserInstallation={(tmp_path / 'profile').as_uri()}",
            "--headless",
            "--convert-to",
            "pdf",
            "--outdir",
            str(tmp_path / "out"),
            str(source),
        ],
        capture_output=True,
        check=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )

    # THEN the picture was asked for
    assert any("/picture.png" in request for request in requests), requests
