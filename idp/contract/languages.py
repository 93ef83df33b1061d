"""The languages a job may ask for: PaddleOCR's codes, and the default."""

from __future__ import annotations

from typing import Final

from idp.contract.names import OcrModel

# PaddleOCR language codes accepted by the PP-OCRv5 / PP-StructureV3 / VL pipelines.
SUPPORTED_LANGUAGES: Final = frozenset(
    {
        "ch",
        "en",
        "chinese_cht",
        "japan",
        "korean",
        "fr",
        "de",
        "es",
        "it",
        "pt",
        "ru",
        "uk",
        "be",
        "ar",
        "fa",
        "ug",
        "ur",
        "hi",
        "mr",
        "ne",
        "bh",
        "mai",
        "ang",
        "bho",
        "mah",
        "sck",
        "new",
        "gom",
        "sa",
        "bgc",
        "ta",
        "te",
        "ka",
        "kn",
        "th",
        "el",
        "vi",
        "tr",
        "la",
        "af",
        "az",
        "bs",
        "cs",
        "cy",
        "da",
        "et",
        "ga",
        "hr",
        "hu",
        "id",
        "is",
        "ku",
        "lt",
        "lv",
        "mi",
        "ms",
        "mt",
        "nl",
        "no",
        "oc",
        "pi",
        "pl",
        "ro",
        "rs_latin",
        "sk",
        "sl",
        "sq",
        "sv",
        "sw",
        "tl",
        "uz",
        "rs_cyrillic",
        "bg",
        "mn",
        "abq",
        "ady",
        "kbd",
        "ava",
        "dar",
        "inh",
        "che",
        "lbe",
        "lez",
        "tab",
        "kk",
        "ky",
        "tg",
        "mk",
        "tt",
        "cv",
        "ba",
        "mhr",
        "mo",
        "udm",
        "kv",
        "os",
        "bua",
        "xal",
        "tyv",
        "sah",
        "kaa",
        "latin",
        "cyrillic",
        "arabic",
        "devanagari",
        "eslav",
    }
)
DEFAULT_LANGUAGE: Final = "en"

# The languages PP-OCRv6's one recognizer reads (small and medium; tiny lacks Japanese and
# part of Traditional Chinese): paddleocr 3.7's list, which a client without paddleocr cannot
# import (tests/idp/document/ocr/paddle/test_engines.py checks that the two agree).
PPOCRV6_LANGUAGES: Final = frozenset(
    {
        *("ch", "chinese_cht", "japan", "en", "french", "german"),
        *("af", "az", "bs", "ca", "cs", "cy", "da", "de", "es", "et", "eu", "fi", "fr", "ga"),
        *("gl", "hr", "hu", "id", "is", "it", "ku", "la", "lb", "lt", "lv", "mi", "ms", "mt"),
        *("nl", "no", "oc", "pl", "pt", "qu", "rm", "ro", "rs_latin", "sk", "sl", "sq", "sv"),
        *("sw", "tl", "tr", "uz", "vi"),
    }
)


def default_text_model(lang: str) -> OcrModel:
    """The text-line model for a job that names none: PP-OCRv6, which reads numbers, words and
    Latin accents best on the pages measured (docs/benchmarks.md), or PP-OCRv5 for a language
    PP-OCRv6 does not read (Korean, Cyrillic, Arabic, Indic scripts and the rest)."""
    return OcrModel.PP_OCRV6 if lang in PPOCRV6_LANGUAGES else OcrModel.PP_OCRV5
