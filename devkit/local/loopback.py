"""A threaded HTTP server on 127.0.0.1 and a free port, for the runtime's stand-in AWS APIs."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

logger = logging.getLogger("devkit.local.http")

RequestHandler = Callable[[BaseHTTPRequestHandler], None]


class LoopbackServer:
    """Answers every POST with `handle(request)`, in background threads."""

    def __init__(self, handle: RequestHandler) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                handle(self)

            def log_message(self, format: str, *args: object) -> None:
                logger.debug(format, *args)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def read_body(request: BaseHTTPRequestHandler) -> bytes:
    length = int(request.headers.get("Content-Length") or 0)
    return request.rfile.read(length) if length else b""


def reply(
    request: BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    *,
    content_type: str = "application/json",
    headers: Mapping[str, str] | None = None,
) -> None:
    request.send_response(status)
    request.send_header("Content-Type", content_type)
    request.send_header("Content-Length", str(len(body)))
    for key, value in (headers or {}).items():
        request.send_header(key, value)
    request.end_headers()
    request.wfile.write(body)
