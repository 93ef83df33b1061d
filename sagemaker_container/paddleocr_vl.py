"""The deployed engine: PaddleOCR-VL (layout detection, then the 0.9B VLM per region) over vLLM.

The layout model runs in this process (PaddlePaddle); every detected region becomes one request
to the vLLM server, up to `region_concurrency` in flight per page, so a page's regions are
recognized together instead of one after another.
"""

from __future__ import annotations

import html
import importlib.metadata
import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from idp.contract.errors import ENGINE_FAULTS, EngineFailure
from idp.contract.results import Block, EngineInfo, Line, Quad
from idp.document.decode import PageImage
from idp.document.ocr.engine import PageContent
from idp.document.ocr.models.catalogue import VL_PIPELINE_MODELS
from idp.document.ocr.steps.regions import block_type
from idp.document.ocr.steps.tables import cells_of_html

logger = logging.getLogger(__name__)

VLLM_BACKEND: Final = "vllm-server"
ENGINE_NAME: Final = "paddleocr"


@dataclass(frozen=True)
class VlPipelineModels:
    """The two models one PaddleOCR-VL pipeline version needs (names as PaddleX knows them)."""

    version: str
    layout_model: str
    vlm_model: str


PIPELINES: Final[dict[str, VlPipelineModels]] = {
    version: VlPipelineModels(version, layout, vlm)
    for version, (layout, vlm) in VL_PIPELINE_MODELS.items()
}

# Labels PaddleOCR-VL leaves out of Markdown by default (pipeline config markdown_ignore_labels):
# page furniture, not body text. They stay as blocks but are not part of the text.
DEFAULT_IGNORED_LABELS: Final = frozenset(
    {"number", "footnote", "header", "header_image", "footer", "footer_image", "aside_text"}
)
TABLE_LABELS: Final = frozenset({"table"})
MARKDOWN_LABELS: Final = frozenset(
    {"display_formula", "inline_formula", "formula", "chart", "image", "seal"}
)
# The VLM reports no per-region score; lines carry 1.0 by convention (documented in docs/).
VL_LINE_CONFIDENCE: Final = 1.0


def pipeline_models(version: str) -> VlPipelineModels:
    try:
        return PIPELINES[version]
    except KeyError:
        raise ValueError(
            f"unknown PaddleOCR-VL pipeline version {version!r}; use one of {', '.join(PIPELINES)}"
        ) from None


@dataclass(frozen=True)
class VlEngineConfig:
    models: VlPipelineModels
    layout_model_dir: Path | None  # None: PaddleX fetches it from the hub (only when allowed)
    server_url: str  # the vLLM server's OpenAI-compatible root, e.g. http://127.0.0.1:8118/v1
    region_concurrency: int = 64
    device: str = "gpu:0"


def pipeline_kwargs(config: VlEngineConfig) -> dict[str, Any]:
    """Arguments for `paddleocr.PaddleOCRVL(...)`.

    The VLM's own weights are loaded by the vLLM server, so no `vl_rec_model_dir` here; the
    served model name is given so the client does not have to ask the server for it.
    Document preprocessing stays off: it needs two more models and VL jobs do not ask for it.
    """
    models = config.models
    return {
        "pipeline_version": models.version,
        "layout_detection_model_name": models.layout_model,
        "layout_detection_model_dir": (
            str(config.layout_model_dir) if config.layout_model_dir is not None else None
        ),
        "vl_rec_model_name": models.vlm_model,
        "vl_rec_backend": VLLM_BACKEND,
        "vl_rec_server_url": config.server_url,
        "vl_rec_max_concurrency": config.region_concurrency,
        "vl_rec_api_model_name": models.vlm_model,
        "use_doc_orientation_classify": False,
        "use_doc_unwarping": False,
        "device": config.device,
    }


def _paddleocr_vl_class() -> Callable[..., Any]:
    from idp.document.ocr.paddle.environment import prepare_paddle_environment

    prepare_paddle_environment()
    from paddleocr import PaddleOCRVL

    return PaddleOCRVL  # type: ignore[no-any-return]


def _paddleocr_version() -> str:
    try:
        return importlib.metadata.version("paddleocr")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class PaddleOcrVlEngine:
    """One PaddleOCR-VL pipeline instance. Not re-entrant: the server pools instances."""

    def __init__(
        self,
        config: VlEngineConfig,
        *,
        pipeline_factory: Callable[..., Any] | None = None,
        version: str | None = None,
    ) -> None:
        if pipeline_factory is None:
            from idp.document.ocr.paddle.environment import only_local_models

            with only_local_models():  # every model from its pinned directory, or refused
                self._pipeline = _paddleocr_vl_class()(**pipeline_kwargs(config))
        else:
            self._pipeline = pipeline_factory(**pipeline_kwargs(config))
        self._info = EngineInfo(
            name=ENGINE_NAME,
            version=version if version is not None else _paddleocr_version(),
            models=[config.models.layout_model, config.models.vlm_model],
            substitute=False,
        )
        # PaddleX predictors keep per-call state; one page (batch) at a time per instance.
        self._lock = threading.Lock()

    @property
    def info(self) -> EngineInfo:
        return self._info

    def recognize(self, page: PageImage) -> PageContent:
        return self.recognize_pages([page])[0]

    def recognize_pages(self, pages: Sequence[PageImage]) -> list[PageContent]:
        """Recognize several pages in one pipeline call: their regions share the VLM queue."""
        images = [np.ascontiguousarray(page.pixels[:, :, ::-1]) for page in pages]  # RGB→BGR
        with self._lock:
            try:
                results = list(self._pipeline.predict(images if len(images) > 1 else images[0]))
            except ENGINE_FAULTS:
                raise
            except Exception as exc:
                logger.exception("PaddleOCR-VL failed on pages %s", [p.page for p in pages])
                raise EngineFailure(f"PaddleOCR-VL failed: {type(exc).__name__}: {exc}") from exc
        if len(results) != len(pages):
            raise EngineFailure(
                f"PaddleOCR-VL returned {len(results)} results for {len(pages)} pages"
            )
        return [page_content_from_result(result) for result in results]

    def close(self) -> None:
        close = getattr(self._pipeline, "close", None)
        if callable(close):
            close()


def page_content_from_result(result: Any) -> PageContent:
    """Convert one PaddleOCR-VL page result through its documented `json` and `markdown` views."""
    res_json: Mapping[str, Any] = result.json["res"]
    markdown: Mapping[str, Any] = result.markdown
    return page_content_from_json(res_json, markdown.get("markdown_texts"))


def page_content_from_json(res: Mapping[str, Any], markdown_text: str | None) -> PageContent:
    """`res` is PaddleOCR-VL's JSON page result (`parsing_res_list` of labelled blocks).

    Every block becomes a Block, typed as idp.document.ocr.steps.regions types a layout model's
    regions (its label kept; a table's cells read from its HTML). Body blocks (not page
    furniture) also become one Line each, in the pipeline's reading order, so the result's text
    reads like the page.
    """
    settings = res.get("model_settings") or {}
    ignored = frozenset(settings.get("markdown_ignore_labels") or DEFAULT_IGNORED_LABELS)
    blocks: list[Block] = []
    lines: list[Line] = []
    for item in res.get("parsing_res_list") or []:
        label = str(item.get("block_label", "text"))
        content = str(item.get("block_content") or "")
        box = _quad(item.get("block_bbox"))
        kind = block_type(label)
        if label in TABLE_LABELS:
            blocks.append(
                Block(type=kind, label=label, box=box, html=content, cells=cells_of_html(content))
            )
        elif label in MARKDOWN_LABELS:
            blocks.append(Block(type=kind, label=label, box=box, markdown=content))
        else:
            blocks.append(Block(type=kind, label=label, box=box, text=content))
        text = _plain_text(label, content)
        if label not in ignored and text:
            blocks[-1].lines.append(len(lines))
            lines.append(Line(text=text, box=box, confidence=VL_LINE_CONFIDENCE))
    page_markdown = markdown_text.strip() if markdown_text else None
    return PageContent(lines=lines, blocks=blocks, markdown=page_markdown or None)


def _quad(bbox: object) -> Quad:
    if not isinstance(bbox, Sequence) or len(bbox) != 4:
        raise EngineFailure(f"PaddleOCR-VL block has no [x1, y1, x2, y2] box: {bbox!r}")
    x1, y1, x2, y2 = (float(v) for v in bbox)
    return ((x1, y1), (x2, y1), (x2, y2), (x1, y2))


_ROW_END = re.compile(r"</tr\s*>", re.IGNORECASE)
_CELL_END = re.compile(r"</t[dh]\s*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")
_SPACES = re.compile(r"[ \t]+")


def _plain_text(label: str, content: str) -> str:
    if label in TABLE_LABELS:
        content = _ROW_END.sub("\n", content)
        content = _CELL_END.sub(" ", content)
        content = html.unescape(_TAG.sub("", content))
    rows = (_SPACES.sub(" ", row).strip() for row in content.splitlines())
    return "\n".join(row for row in rows if row)
