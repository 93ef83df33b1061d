"""A FAKE stand-in for `vllm serve`, for supervisor tests only (no GPU or vLLM here).

It takes the same command line (`serve MODEL_DIR --host H --port P ...`), answers GET /health
with 200 and behaves badly on request through environment variables:
  FAKE_VLM_EXIT_CODE=N      exit with N before serving (a start-up crash)
  FAKE_VLM_EXIT_AFTER=S     serve for S seconds, then exit 1 (a crash in service)
  FAKE_VLM_ARGV_FILE=PATH   append the argv it was started with (one JSON line) to PATH
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Health(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status = 200 if self.path == "/health" else 404
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command")
    parser.add_argument("model_dir")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args, _ = parser.parse_known_args()
    argv_file = os.environ.get("FAKE_VLM_ARGV_FILE")
    if argv_file:
        with open(argv_file, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(sys.argv[1:]) + "\n")
    exit_code = os.environ.get("FAKE_VLM_EXIT_CODE")
    if exit_code:
        print(f"fake vlm: cannot load model from {args.model_dir}", flush=True)
        raise SystemExit(int(exit_code))
    server = ThreadingHTTPServer((args.host, args.port), _Health)
    exit_after = os.environ.get("FAKE_VLM_EXIT_AFTER")
    if exit_after:
        threading.Timer(float(exit_after), lambda: os._exit(1)).start()
    print(f"fake vlm: serving {args.model_dir} on {args.host}:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
