"""The soak benchmark at a small size (benchmarks/soak.py): a long scanned PDF whose chunk dies
on every attempt, bad files and pages, dropped into S3 at once with the faults armed. Every
document ends as it should, none is lost, and each job publishes one event; the benchmark's
verdict says so."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from benchmarks import soak

pytestmark = pytest.mark.ocr


def test_a_small_soak_loses_nothing_and_fails_only_what_should_fail(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN 14 documents: a scanned 30-45 page PDF whose chunk 1 dies on every attempt, the 4
    # bad files and 9 pages, with the faults planned for them
    args = argparse.Namespace(
        count=14, processor_concurrency=2, timeout=600.0, seed=7, models_dir=str(models_dir)
    )

    # WHEN they are dropped into the input bucket and every job ends
    report = soak.run_in(args, tmp_path)

    # THEN each ended as it should: pages COMPLETED, bad files FAILED with their own codes, the
    # long PDF FAILED because its chunk crashed; nothing lost, one event per job
    assert report["documents"] == 14
    assert report["kinds"] == {"bad": 4, "crashing-chunk": 1, "page": 9}
    assert report["statuses"] == {"COMPLETED": 9, "FAILED": 5}
    assert report["error_codes"] == {
        "CORRUPT_DOCUMENT": 1,  # the truncated PDF
        "EMPTY_INPUT": 1,
        "PROCESSOR_CRASHED": 1,  # the long PDF
        "UNSUPPORTED_MEDIA_TYPE": 2,  # text named .jpg, HTML named .tiff
    }
    assert report["unexpected_outcomes"] == []
    assert report["lost_documents"] == []
    assert report["documents_with_two_jobs"] == []
    assert report["events"]["jobs_with_one"] == report["jobs"] == 14
    assert report["faults_fired"]["chunk_crashes"] >= 3  # every attempt of the chunk died
    assert report["faults_fired"]["duplicate_chunk_events"] == 2
    assert report["dlq_messages"] == 0
    assert soak.failures(report) == []
    # AND a report with a lost document, a double merge or a missing event fails the run
    broken = {
        **report,
        "lost_documents": ["page-0001.png"],
        "jobs_merged_twice": ["j"],
        "events": {**report["events"], "missing": ["k"]},
    }
    assert len(soak.failures(broken)) == 3
