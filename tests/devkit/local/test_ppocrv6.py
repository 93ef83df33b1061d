"""PP-OCRv6 offline through the local pipeline: one small model reads English, French, German,
Spanish, Polish, Japanese and Chinese pages, accents and all; a language it does not read fails
with UNSUPPORTED_LANGUAGE, naming the PP-OCRv5 model that reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from devkit.textmetrics import character_error_rate
from idp.contract.names import JobStatus, OcrModel
from tests.local_runs import JOB_TIMEOUT_S, running_pipeline
from tests.paths import SAMPLES

pytestmark = pytest.mark.ocr

LANGUAGES = ("en", "fr", "de", "es", "pl", "japan", "ch")
# Words whose accents or script a model without them gets wrong.
MARKED_WORDS = {
    "fr": ("garçon", "été", "déçu", "Noël", "fenêtre", "coûte"),
    "de": ("Grüße", "München", "Straße", "Bücher", "für", "Jürgen"),
    "es": ("niño", "comió", "piña", "montaña", "está", "estación"),
    "pl": ("Zażółć", "gęślą", "jaźń", "Łodzi", "Książka", "złotych"),
    "japan": ("ひらがな", "カタカナ"),
}


def test_ppocrv6_reads_its_languages_offline_and_refuses_the_others(
    tmp_path: Path, models_dir: Path
) -> None:
    # GIVEN a page per language, each submitted with PP-OCRv6 and its language, and a page
    # submitted in Russian and in Korean
    with running_pipeline(
        tmp_path / "work", models_dir, vl_enabled=False, quiet_functions=True
    ) as pipeline:
        client = pipeline.client()
        jobs = {
            lang: client.submit(SAMPLES / f"lang-{lang}.png", model=OcrModel.PP_OCRV6, lang=lang)
            for lang in LANGUAGES
        }
        refused = {
            lang: client.submit(SAMPLES / "lang-en.png", model=OcrModel.PP_OCRV6, lang=lang)
            for lang in ("ru", "korean")
        }

        # WHEN they end
        ids = [job.job_id for job in (*jobs.values(), *refused.values())]
        records = client.wait(ids, timeout_s=JOB_TIMEOUT_S)
        results = {lang: client.result_document(job.job_id) for lang, job in jobs.items()}

    # THEN each page reads as printed, by PP-OCRv6's own small models
    for lang, job in jobs.items():
        record = records[job.job_id]
        assert record is not None
        assert record["status"] == JobStatus.COMPLETED, record
        result = results[lang]
        assert result["model"] == "PP-OCRv6"
        assert result["engine"]["models"][:2] == ["PP-OCRv6_small_det", "PP-OCRv6_small_rec"]
        truth = (SAMPLES / f"lang-{lang}.txt").read_text().strip()
        assert character_error_rate(truth, result["text"]) <= 0.02, result["text"]
        for word in MARKED_WORDS.get(lang, ()):
            assert word in result["text"], (lang, word, result["text"])
    # AND Russian and Korean fail, naming the model that reads them
    for lang, job in refused.items():
        record = records[job.job_id]
        assert record is not None
        assert record["status"] == JobStatus.FAILED
        assert record["error"]["code"] == "UNSUPPORTED_LANGUAGE"
        assert "PP-OCRv5" in record["error"]["message"]
        assert lang in record["error"]["message"]


def test_ppocrv6_tiny_reads_latin_and_chinese_and_refuses_japanese(models_dir: Path) -> None:
    # GIVEN a processor configured for PP-OCRv6 tiny (the stack's ppocrv6Size), offline weights
    from idp.contract.errors import UnsupportedLanguage
    from idp.contract.jobs import JobOptions
    from idp.document.ocr.models.cache import ModelCache
    from idp.document.ocr.pipeline import ocr_document
    from idp.document.ocr.registry import EngineRegistry
    from idp.document.ocr.settings import EngineSettings

    cache = ModelCache(search_roots=[models_dir])
    registry = EngineRegistry(
        resolve=cache.fetch, settings=EngineSettings(cpu_threads=2, ppocrv6_size="tiny")
    )
    options = JobOptions()
    # WHEN it reads the French, German and Chinese pages with their languages
    for lang in ("fr", "de", "ch"):
        engine = registry.get(OcrModel.PP_OCRV6, lang, options)
        image = SAMPLES / f"lang-{lang}.png"
        outcome = ocr_document(image.read_bytes(), engine=engine, options=options, max_pages=1)
        text = outcome.pages[0].text
        # THEN the tiny models read them, accents and all
        assert engine.info.models[:2] == ["PP-OCRv6_tiny_det", "PP-OCRv6_tiny_rec"]
        truth = image.with_suffix(".txt").read_text().strip()
        assert character_error_rate(truth, text) <= 0.03, text
        for word in MARKED_WORDS.get(lang, ()):
            assert word in text, (lang, word, text)
    # AND Japanese, which its dictionary cannot spell (no kana), is refused, naming the sizes
    # and the model that read it
    with pytest.raises(UnsupportedLanguage) as refused:
        registry.get(OcrModel.PP_OCRV6, "japan", options)
    assert "PP-OCRv6 tiny" in refused.value.message
    assert "small and medium" in refused.value.message
    assert "PP-OCRv5" in refused.value.message
