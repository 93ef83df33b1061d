"""How the CPU engines run (EngineSettings), and the inference backend they run on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from idp.document.ocr.decoding.thresholds import SPACE_EVIDENCE

InferenceBackend = Literal["paddle", "onnxruntime"]


@dataclass(frozen=True)
class EngineSettings:
    """How the CPU engines run: deployment tuning, not part of a job's identity.

    Defaults are tuned for a 2-vCPU Lambda-sized CPU (see benchmarks/processor.py).
    """

    variant: Literal["mobile", "server"] = "mobile"
    # PP-OCRv6's size (idp.document.ocr.models.catalogue.PPOCRV6_SIZES): small ships offline.
    ppocrv6_size: Literal["tiny", "small", "medium"] = "small"
    device: str = "cpu"
    # "auto": ONNX Runtime when it is installed and every model dir carries inference.onnx
    # (same weights, exported by paddle2onnx): it starts without importing paddle and runs
    # PP-OCRv5 faster on CPU. Otherwise Paddle Inference with oneDNN.
    runtime: Literal["auto", "paddle", "onnxruntime"] = "auto"
    cpu_threads: int = 2
    enable_mkldnn: bool = True
    mkldnn_cache_capacity: int = 10
    # Detection input: the longer page side is scaled to at most this many pixels. PaddleOCR's
    # default ("min" 64) runs detection on the full page: 4-5× the work at 144 dpi, same text.
    det_limit_type: Literal["max", "min"] = "max"
    det_limit_side_len: int = 1280
    # None: per runtime (ONNX Runtime 1: wide text lines batched together run slower per
    # line on CPU; Paddle 6, the library default).
    rec_batch_size: int | None = None
    # Word spaces the recognizer saw but lost to CTC's blank (idp.document.ocr.decoding): the
    # least p(space) that writes one. None decodes text lines exactly as PaddleX does.
    word_space_evidence: float | None = SPACE_EVIDENCE
    # With it, a look-alike letter in a token of digits ("2O26") is read as the digit close
    # behind it in probability (decoding.lookalikes.LookalikeDigits), and a point before exactly
    # three digits ("37.313") as the thousands comma close behind it (ThousandsCommas there).
    lookalike_digits: bool = True
    # PP-StructureV3 parts. Formula recognition (PP-FormulaNet_plus-L) is off on CPU: it is
    # by far the slowest sub-model and most business documents carry no formulas. Its regions'
    # text is read by this text-line model unless the job names one (JobOptions.text_model):
    # PP-OCRv6 reads table cells better (docs/structure.md, "Which text model").
    structure_text_model: Literal["PP-OCRv5", "PP-OCRv6"] = "PP-OCRv6"
    use_table_recognition: bool = True
    use_formula_recognition: bool = False
    use_region_detection: bool = True

    def runtime_kwargs(self, runtime: InferenceBackend) -> dict[str, Any]:
        """The library's common arguments (device, inference engine, threads)."""
        if runtime == "onnxruntime":
            return {
                "device": self.device,
                "engine": "onnxruntime",
                "engine_config": {
                    "intra_op_num_threads": self.cpu_threads,
                    "inter_op_num_threads": 1,
                },
            }
        return {
            "device": self.device,
            "cpu_threads": self.cpu_threads,
            "enable_mkldnn": self.enable_mkldnn,
            "mkldnn_cache_capacity": self.mkldnn_cache_capacity,
        }

    def rec_batch_for(self, runtime: InferenceBackend) -> int:
        if self.rec_batch_size is not None:
            return self.rec_batch_size
        return 1 if runtime == "onnxruntime" else 6
