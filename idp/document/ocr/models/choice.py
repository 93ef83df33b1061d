"""Which models a job needs: the recognition model that reads its language, the sub-models its
options and the engine settings turn on, and their local dirs from the model cache."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final

from idp.contract.errors import ModelUnavailable, UnsupportedLanguage
from idp.contract.jobs import JobOptions
from idp.contract.languages import PPOCRV6_LANGUAGES
from idp.contract.names import OcrModel
from idp.document.ocr.models.catalogue import (
    DOC_UNWARPING_MODEL,
    FORMULA_MODEL,
    LAYOUT_MODEL,
    PPOCRV6_DEFAULT_SIZE,
    REGION_MODEL,
    TABLE_MODELS,
    TEXTLINE_ORIENTATION_MODEL,
    base_recognition_model_name,
    detection_model_name,
    ppocrv6_detection_model_name,
    ppocrv6_recognition_model_name,
    script_recognition_model_name,
)
from idp.document.ocr.settings import EngineSettings

ModelResolver = Callable[[str], Path]
"""Model name → local model directory (ModelCache.fetch); raises ModelUnavailable."""

# Languages PP-OCRv5's base recognition model reads (Simplified/Traditional Chinese, English,
# Japanese). English uses it too: it reads English well and is the model that runs offline.
_BASE_REC_LANGS: Final = frozenset({"ch", "chinese_cht", "japan", "en"})
# Languages with a recognition model of their own, named by the language code.
_SINGLE_SCRIPT_LANGS: Final = frozenset({"korean", "th", "el", "te", "ta"})

ModelDirs = Mapping[str, tuple[str, Path]]
"""{pipeline role: (model name, local model dir)}."""


def _script_families() -> Sequence[tuple[str, Iterable[str]]]:
    """PaddleOCR's language groups, each read by its script family's recognition model."""
    from paddleocr._utils.langs import (
        ARABIC_LANGS,
        CYRILLIC_LANGS,
        DEVANAGARI_LANGS,
        ESLAV_LANGS,
        LATIN_LANGS,
    )

    return (
        ("latin", LATIN_LANGS),
        ("eslav", ESLAV_LANGS),  # before cyrillic: ru/uk/be have their own model
        ("arabic", ARABIC_LANGS),
        ("cyrillic", CYRILLIC_LANGS),
        ("devanagari", DEVANAGARI_LANGS),
    )


def recognition_model_name(lang: str, variant: str = "mobile") -> str:
    """The PP-OCRv5 text recognition model that reads `lang` (PaddleOCR's language groups)."""
    if lang in _BASE_REC_LANGS:
        return base_recognition_model_name(variant)
    families = _script_families()
    # A script family's own name is accepted as a language code too (e.g. "latin").
    if any(lang == family for family, _ in families):
        return script_recognition_model_name(lang)
    for family, members in families:
        if lang in members:
            return script_recognition_model_name(family)
    if lang in _SINGLE_SCRIPT_LANGS:
        return script_recognition_model_name(lang)
    raise UnsupportedLanguage(
        f"PP-OCRv5 has no recognition model for language {lang!r}; "
        "use e.g. en, ch, fr, de, ru, ar, hi, korean, japan"
    )


# PP-OCRv6 tiny's recognizer has a smaller dictionary (6,904 characters against small's
# 18,708): no kana, and not all of Traditional Chinese (e.g. no 說, 麼), so it does not read these.
_PPOCRV6_TINY_UNREAD: Final = frozenset({"japan", "chinese_cht"})


def ppocrv6_languages(size: str = PPOCRV6_DEFAULT_SIZE) -> frozenset[str]:
    """The languages PP-OCRv6's one recognition model of `size` reads: paddleocr's own list
    (Chinese, Traditional Chinese, English, Japanese and the Latin-script languages it covers),
    less what the tiny model's dictionary lacks."""
    if size == "tiny":
        return PPOCRV6_LANGUAGES - _PPOCRV6_TINY_UNREAD
    return PPOCRV6_LANGUAGES


def check_ppocrv6_language(lang: str, size: str = PPOCRV6_DEFAULT_SIZE) -> None:
    """UnsupportedLanguage, naming the models that read `lang`, when PP-OCRv6 of `size` does
    not."""
    if lang in ppocrv6_languages(size):
        return
    if lang in ppocrv6_languages():
        raise UnsupportedLanguage(
            f"PP-OCRv6 {size} does not read language {lang!r} (its dictionary lacks the "
            "script); PP-OCRv6 small and medium read it (the stack's ppocrv6Size), and so does "
            f"PP-OCRv5 ({recognition_model_name(lang)})"
        )
    try:
        recognition_model_name(lang)
    except UnsupportedLanguage:
        raise UnsupportedLanguage(
            f"no model here reads language {lang!r}; PP-OCRv6 reads e.g. en, ch, japan, fr, de, "
            "es, pl, tr"
        ) from None
    raise UnsupportedLanguage(
        f"PP-OCRv6 does not read language {lang!r} (its recognizer covers Chinese, English, "
        f"Japanese and Latin scripts); submit it with model PP-OCRv5, whose "
        f"{recognition_model_name(lang)} reads it"
    )


def _preprocessing_models(options: JobOptions) -> dict[str, str]:
    # Page orientation is not PaddleOCR's step here: idp.document.ocr.steps.orientation runs it in
    # front of every engine (see EngineRegistry.get), so boxes can be mapped back onto the page.
    roles: dict[str, str] = {}
    if options.use_doc_unwarping:
        roles["doc_unwarping"] = DOC_UNWARPING_MODEL
    if options.use_textline_orientation:
        roles["textline_orientation"] = TEXTLINE_ORIENTATION_MODEL
    return roles


def ocr_model_names(lang: str, options: JobOptions, settings: EngineSettings) -> dict[str, str]:
    """{PaddleOCR role: model name} for a PP-OCRv5 engine."""
    return {
        "text_detection": detection_model_name(settings.variant),
        "text_recognition": recognition_model_name(lang, settings.variant),
        **_preprocessing_models(options),
    }


def ppocrv6_model_names(lang: str, options: JobOptions, settings: EngineSettings) -> dict[str, str]:
    """{PaddleOCR role: model name} for a PP-OCRv6 engine of the configured size."""
    check_ppocrv6_language(lang, settings.ppocrv6_size)
    return {
        "text_detection": ppocrv6_detection_model_name(settings.ppocrv6_size),
        "text_recognition": ppocrv6_recognition_model_name(settings.ppocrv6_size),
        **_preprocessing_models(options),
    }


def _structure_text_model(lang: str, settings: EngineSettings) -> OcrModel:
    """The configured text model for a structure job that names none; PP-OCRv5 where the
    configured one is PP-OCRv6 and it does not read `lang` (PP-OCRv5 reads more languages)."""
    model = OcrModel(settings.structure_text_model)
    if model is OcrModel.PP_OCRV6:
        try:
            check_ppocrv6_language(lang, settings.ppocrv6_size)
        except UnsupportedLanguage:
            return OcrModel.PP_OCRV5
    return model


def structure_model_names(
    lang: str, options: JobOptions, settings: EngineSettings
) -> dict[str, str]:
    """{PPStructureV3 role: model name} for every sub-model the configured pipeline loads, its
    text read by the job's text model (or the configured one)."""
    text_model = options.text_model or _structure_text_model(lang, settings)
    text_roles = ppocrv6_model_names if text_model is OcrModel.PP_OCRV6 else ocr_model_names
    roles = {"layout_detection": LAYOUT_MODEL, **text_roles(lang, options, settings)}
    if settings.use_region_detection:
        roles["region_detection"] = REGION_MODEL
    if settings.use_table_recognition:
        roles.update(TABLE_MODELS)
    if settings.use_formula_recognition:
        roles["formula_recognition"] = FORMULA_MODEL
    return roles


def resolve_models(roles: Mapping[str, str], resolve: ModelResolver) -> dict[str, tuple[str, Path]]:
    """Fetch every model dir; ModelUnavailable names every model that is missing."""
    found: dict[str, tuple[str, Path]] = {}
    missing: list[ModelUnavailable] = []
    names_missing: list[str] = []
    for role, name in roles.items():
        try:
            found[role] = (name, resolve(name))
        except ModelUnavailable as exc:
            missing.append(exc)
            names_missing.append(name)
    if missing:
        if len(missing) == 1:
            raise missing[0]
        raise ModelUnavailable(
            f"models not available: {', '.join(dict.fromkeys(names_missing))}. {missing[0].message}"
        )
    return found
