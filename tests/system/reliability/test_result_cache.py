"""Identical bytes uploaded again as a new object: a new job, completed from the result cache."""

from __future__ import annotations

from pathlib import Path

from idp.contract.names import JobStatus
from tests.system.reliability.conftest import Reliability, good_page_png


def test_reuploaded_identical_bytes_complete_from_the_cache_without_ocr(
    reliability: Reliability, tmp_path: Path
) -> None:
    # GIVEN a document that has been OCR'd once
    data = good_page_png("Cached documents are recognized only once.")
    first_file = tmp_path / "original.png"
    first_file.write_bytes(data)
    first, original = reliability.run(first_file)
    assert original["status"] == JobStatus.COMPLETED
    assert not original.get("cached")

    # WHEN the same bytes arrive again as a new object (another name, another job)
    again_file = tmp_path / "copy-of-original.png"
    again_file.write_bytes(data)
    second, repeat = reliability.run(again_file)

    # THEN it is a separate job, COMPLETED from the cache: marked cached, no engine, no OCR
    assert second.job_id != first.job_id
    assert repeat["status"] == JobStatus.COMPLETED
    assert repeat["cached"] is True
    assert repeat["content_sha256"] == original["content_sha256"]
    assert "ocr" not in repeat["timings_ms"]
    assert "engine_load" not in repeat["timings_ms"]
    result = reliability.client.result_document(second.job_id)
    assert result["cached"] is True
    assert result["job_id"] == second.job_id
    assert result["source"]["key"] == second.key
    assert result["text"] == reliability.client.result_document(first.job_id)["text"]


def test_the_same_bytes_in_another_language_are_recognized_again(
    reliability: Reliability, tmp_path: Path
) -> None:
    # GIVEN a document already OCR'd in English
    path = tmp_path / "page.png"
    path.write_bytes(good_page_png("Language is part of what a cached result means."))
    reliability.run(path, lang="en")

    # WHEN the same bytes are submitted for another language
    _, record = reliability.run(path, lang="fr")

    # THEN the cache does not answer for it: the engine runs (or fails) for that language
    assert not record.get("cached")
