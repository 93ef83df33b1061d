"""The real `serve` process over HTTP, with the PP-OCRv5 substitute engine and moto S3.

One server process for the module: /ping before and after warm-up, PNG and 2-page PDF
manifests, the 4xx contract, and a concurrent burst.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from devkit import synthetic
from devkit.textmetrics import character_error_rate

from .helpers import HttpReply, MotoS3, ServerProcess

pytestmark = pytest.mark.ocr

BUCKET = "vl-input"
PNG_LINES = synthetic.sample_lines(3)
PDF_PAGES = [synthetic.sample_lines(3, offset=3), synthetic.sample_lines(3, offset=6)]
PAGE_SIZE = (1300, 280)


def render(lines: list[str]) -> Any:
    return synthetic.render_page(lines, size=PAGE_SIZE, font_size=30, margin=40)


@dataclass
class Started:
    server: ServerProcess
    first_ping: HttpReply
    objects: dict[str, bytes]


def manifest(key: str, **overrides: Any) -> dict[str, Any]:
    job: dict[str, Any] = {
        "job_id": f"job-{key.replace('/', '-').replace('.', '-')}",
        "bucket": BUCKET,
        "key": key,
        "model": "PaddleOCR-VL",
        "lang": "en",
        "options": {},
    }
    job.update(overrides)
    return job


@pytest.fixture(scope="module")
def started(
    moto_s3: MotoS3, models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Started]:
    objects = {
        "input/PaddleOCR-VL/letter.png": synthetic.encode(render(PNG_LINES), "PNG"),
        # 144 dpi: each 650×140 pt page renders at the default 2× scale to 1300×280 pixels.
        "input/PaddleOCR-VL/two-pages.pdf": synthetic.encode_pages(
            [render(lines) for lines in PDF_PAGES], "PDF", resolution=144.0
        ),
        # Page 2 of two-pages.pdf alone: a chunk's own PDF, as the processor splits it.
        "work/job-long/chunks/00001.pdf": synthetic.encode_pages(
            [render(PDF_PAGES[1])], "PDF", resolution=144.0
        ),
        "input/PaddleOCR-VL/broken.pdf": b"%PDF-1.7\n1 0 obj <</Type /Catalog>> garbage",
        "input/PaddleOCR-VL/notes.txt": b"just some notes, not a document\n",
    }
    s3 = moto_s3.client()
    s3.create_bucket(Bucket=BUCKET)
    for key, body in objects.items():
        s3.put_object(Bucket=BUCKET, Key=key, Body=body)
    work = tmp_path_factory.mktemp("vl-server")
    server = ServerProcess(
        {
            "VL_ENGINE": "substitute-ppocrv5",
            "IDP_MODELS_DIR": str(models_dir),
            "AWS_ENDPOINT_URL": moto_s3.endpoint_url,
            "PADDLE_PDX_CACHE_HOME": str(work / "paddlex"),
            "PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK": "True",
            "VL_MAX_CONCURRENT_REQUESTS": "4",
        },
        work / "server.log",
    )
    try:
        first_ping = server.wait_listening()
        yield Started(server=server, first_ping=first_ping, objects=objects)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def server(started: Started) -> ServerProcess:
    started.server.wait_state({"ready"})
    return started.server


def assert_error(reply: HttpReply, status: int, code: str) -> None:
    assert reply.status == status, reply.body
    assert set(reply.body) == {"error"}
    assert reply.body["error"]["code"] == code
    assert reply.body["error"]["message"]


def test_ping_is_503_while_loading_and_200_once_warmed_up(started: Started) -> None:
    # GIVEN the server process just started
    # THEN its first /ping answer is 503 while the engine loads
    assert started.first_ping.status == 503
    assert started.first_ping.body["state"] in {"starting", "building-engine", "warming-up"}
    # WHEN loading and the warm-up inference finish
    reply = started.server.wait_state({"ready"})
    # THEN /ping is 200 and names the substitute engine that runs
    assert reply.status == 200
    assert reply.body["engine"]["name"] == "substitute:PP-OCRv5"
    assert reply.body["engine"]["substitute"] is True


def test_png_manifest_returns_recognized_text(server: ServerProcess, started: Started) -> None:
    # GIVEN a PNG of three known lines in S3
    key = "input/PaddleOCR-VL/letter.png"
    # WHEN its manifest is posted
    reply = server.invoke(manifest(key))
    # THEN the result is the SPEC's result JSON with the text recognized
    assert reply.status == 200, reply.body
    result = reply.body
    assert result["job_id"] == "job-input-PaddleOCR-VL-letter-png"
    assert result["model"] == "PaddleOCR-VL"
    assert result["engine"]["name"] == "substitute:PP-OCRv5"
    assert result["engine"]["substitute"] is True
    assert result["source"] == {
        "bucket": BUCKET,
        "key": key,
        "sha256": hashlib.sha256(started.objects[key]).hexdigest(),
        "media_type": "image/png",
        "page_count": 1,
        "size_bytes": len(started.objects[key]),
        "conversion": None,  # an image, not an Office document's conversion
    }
    (page,) = result["pages"]
    assert (page["page"], page["width"], page["height"]) == (1, *PAGE_SIZE)
    assert page["rotation"] == 0  # the endpoint reads pages as given (no orientation step)
    assert all(len(line["box"]) == 4 for line in page["lines"])
    assert character_error_rate(" ".join(PNG_LINES), result["text"]) <= 0.02
    assert {"fetch", "queue", "open", "rasterize", "ocr", "total"} <= set(result["timings_ms"])


def test_two_page_pdf_manifest_returns_both_pages(server: ServerProcess) -> None:
    # GIVEN a two-page PDF in S3
    # WHEN its manifest is posted
    reply = server.invoke(manifest("input/PaddleOCR-VL/two-pages.pdf"))
    # THEN both pages come back in order, rendered at 2×, each with its own text
    assert reply.status == 200, reply.body
    pages = reply.body["pages"]
    assert [p["page"] for p in pages] == [1, 2]
    assert reply.body["source"]["media_type"] == "application/pdf"
    assert reply.body["source"]["page_count"] == 2
    for page, lines in zip(pages, PDF_PAGES, strict=True):
        assert (page["width"], page["height"]) == PAGE_SIZE
        text = " ".join(line["text"] for line in page["lines"])
        assert character_error_rate(" ".join(lines), text) <= 0.02


@pytest.mark.parametrize(
    "chunk",
    [
        pytest.param(
            {"part_bucket": BUCKET, "part_key": "work/job-long/chunks/00001.pdf"}, id="own-pdf"
        ),
        pytest.param({}, id="pages-of-the-input"),
    ],
)
def test_a_chunk_manifest_reads_only_its_pages_numbered_as_in_the_document(
    server: ServerProcess, chunk: dict[str, str]
) -> None:
    # GIVEN the manifest of a large document's chunk holding its page 2 (its own PDF, or the
    # page range of the whole input)
    body = manifest(
        "input/PaddleOCR-VL/two-pages.pdf",
        chunk={"index": 1, "first_page": 2, "last_page": 2, **chunk},
    )
    # WHEN it is posted
    reply = server.invoke(body)
    # THEN only that page comes back, numbered 2, with its own text
    assert reply.status == 200, reply.body
    [page] = reply.body["pages"]
    assert page["page"] == 2
    text = " ".join(line["text"] for line in page["lines"])
    assert character_error_rate(" ".join(PDF_PAGES[1]), text) <= 0.02


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_other_content_types_get_415(server: ServerProcess, content_type: str) -> None:
    body = json.dumps(manifest("input/PaddleOCR-VL/letter.png")).encode()
    reply = server.invoke(body, content_type=content_type)
    assert_error(reply, 415, "UNSUPPORTED_CONTENT_TYPE")


def test_json_with_charset_parameter_is_accepted(server: ServerProcess) -> None:
    body = json.dumps(manifest("input/PaddleOCR-VL/letter.png")).encode()
    reply = server.invoke(body, content_type="application/json; charset=utf-8")
    assert reply.status == 200, reply.body


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", "INVALID_MESSAGE"),
        (b"[1, 2]", "INVALID_MESSAGE"),
        (json.dumps({"job_id": "j", "bucket": BUCKET}).encode(), "INVALID_MESSAGE"),
        (
            json.dumps(manifest("input/PaddleOCR-VL/letter.png", surprise=1)).encode(),
            "INVALID_MESSAGE",
        ),
        (
            json.dumps(manifest("input/PaddleOCR-VL/letter.png", model="PP-OCRv5")).encode(),
            "UNSUPPORTED_MODEL",
        ),
        (
            json.dumps(manifest("input/PaddleOCR-VL/letter.png", lang="klingon")).encode(),
            "UNSUPPORTED_LANGUAGE",
        ),
        (
            json.dumps(
                manifest("input/PaddleOCR-VL/letter.png", options={"use_doc_unwarping": True})
            ).encode(),
            "INVALID_MESSAGE",
        ),
        (
            json.dumps(
                manifest("input/PaddleOCR-VL/letter.pdf", options={"text_layer": "only"})
            ).encode(),
            "INVALID_MESSAGE",
        ),
    ],
    ids=[
        "not-json",
        "not-object",
        "missing-fields",
        "unknown-field",
        "cpu-model",
        "language",
        "unwarping",
        "text-layer-only",
    ],
)
def test_malformed_manifests_get_400(server: ServerProcess, body: bytes, code: str) -> None:
    assert_error(server.invoke(body), 400, code)


@pytest.mark.parametrize(
    ("key", "code"),
    [
        ("input/PaddleOCR-VL/broken.pdf", "CORRUPT_DOCUMENT"),
        ("input/PaddleOCR-VL/notes.txt", "UNSUPPORTED_MEDIA_TYPE"),
        ("input/PaddleOCR-VL/missing.png", "INPUT_NOT_FOUND"),
    ],
)
def test_unreadable_documents_get_422(server: ServerProcess, key: str, code: str) -> None:
    assert_error(server.invoke(manifest(key)), 422, code)


def test_a_concurrent_burst_all_succeeds_while_ping_stays_responsive(
    server: ServerProcess,
) -> None:
    # GIVEN six jobs posted at once (more than the server runs at a time)
    keys = ["input/PaddleOCR-VL/letter.png", "input/PaddleOCR-VL/two-pages.pdf"] * 3
    with ThreadPoolExecutor(max_workers=len(keys)) as pool:
        futures = [
            pool.submit(server.invoke, manifest(key, job_id=f"burst-{i}"))
            for i, key in enumerate(keys)
        ]
        # WHEN /ping is asked while they run
        time.sleep(0.5)
        tick = time.perf_counter()
        ping = server.ping()
        ping_s = time.perf_counter() - tick
        replies = [future.result() for future in futures]
    # THEN /ping answered at once and every job succeeded with its own text
    assert ping.status == 200
    assert ping_s < 2.0
    assert [r.status for r in replies] == [200] * len(keys)
    assert [r.body["job_id"] for r in replies] == [f"burst-{i}" for i in range(len(keys))]
    for reply, key in zip(replies, keys, strict=True):
        expected = PNG_LINES if key.endswith(".png") else [*PDF_PAGES[0], *PDF_PAGES[1]]
        assert character_error_rate(" ".join(expected), reply.body["text"]) <= 0.02
