"""result.html holds what a result says and nothing a result could smuggle in."""

from __future__ import annotations

from PIL import Image

from devkit.synthetic import encode
from devkit.viewer import render_viewer
from idp.contract.jobs import JobOptions


def _result(text: str, cell: str, *, verdict: str = "ok") -> dict[str, object]:
    box = [[10, 10], [200, 10], [200, 40], [10, 40]]
    return {
        "job_id": "0" * 32,
        "model": "PP-StructureV3",
        "engine": {"name": "paddleocr"},
        "source": {"key": "uploads/x/<b>bold.png"},
        "review_pages": [1] if verdict == "review" else [],
        "pages": [
            {
                "page": 1,
                "markdown": "| cell |",
                "lines": [{"text": text, "box": box, "confidence": 0.42}],
                "blocks": [
                    {
                        "type": "table",
                        "box": box,
                        "lines": [0],
                        "cells": [{"row": 1, "column": 1, "text": cell}],
                    }
                ],
                "quality": {"verdict": verdict, "reasons": ["low_confidence"]},
            }
        ],
    }


def test_text_from_the_page_is_escaped_and_nothing_may_be_fetched() -> None:
    page = encode(Image.new("RGB", (240, 60), "white"), "PNG")
    html = render_viewer(
        page, _result("<script>alert(1)</script>", '<img src="http://x/">'), options=JobOptions()
    )
    assert "<script>" not in html
    assert '<img src="http://x/">' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;bold.png" in html
    assert "content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\"" in html


def test_a_page_to_review_says_why() -> None:
    page = encode(Image.new("RGB", (240, 60), "white"), "PNG")
    html = render_viewer(page, _result("a", "b", verdict="review"), options=JobOptions())
    assert '<p class="reasons">Review: low confidence</p>' in html
    assert "review pages 1" in html
