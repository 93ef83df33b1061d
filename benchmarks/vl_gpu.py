"""PaddleOCR-VL throughput on a GPU: serial per-region (the reference deployment) vs this
container's concurrent mode, on the same pages, in one run.

serial      one page at a time, one region request at a time to the VLM
            (vl_rec_max_concurrency=1): how the reference deployment ran, ~25% GPU busy.
concurrent  what the container does: VL_ENGINE_INSTANCES pipelines, each sending up to
            VL_REGION_CONCURRENCY region requests at once, fed by --concurrency in-flight
            pages (SageMaker's concurrent invocations); vLLM batches whatever is in flight.

Both modes share one supervised vLLM server, started exactly as the container starts it, on
the weights the container would use (VL_MODELS_DIR, else MODEL_CACHE_BUCKET). Needs an NVIDIA
GPU, vLLM (the image's) and paddlepaddle-gpu; without a GPU it says so and exits with 2.

    python benchmarks/vl_gpu.py [--pages 12] [--concurrency 4] [--input DOC ...]
    # in the image: docker run --gpus all -v $PWD/benchmarks:/opt/program/benchmarks \\
    #     --entrypoint python <image> /opt/program/benchmarks/vl_gpu.py

Prints a table and writes JSON (default benchmarks/results/vl_gpu.json). Target: concurrent
pages/hour >= 4x serial; reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from PIL import Image, ImageDraw, ImageFont

from devkit import synthetic
from devkit.textmetrics import character_error_rate
from idp.contract import names
from idp.contract.env.vl import VL_ENGINE_PADDLEOCR_VL, VlEnv
from idp.contract.errors import ModelUnavailable
from idp.document.decode import PageImage
from idp.document.ocr.engine import PageContent

REPO_ROOT = Path(__file__).resolve().parent.parent

TARGET_SPEEDUP: Final = 4.0
EXIT_NO_GPU: Final = 2
EXIT_NO_WEIGHTS: Final = 3
DEFAULT_OUT: Final = REPO_ROOT / "benchmarks" / "results" / "vl_gpu.json"


# -- GPU ------------------------------------------------------------------------------------------
def gpu_names() -> list[str]:
    """The GPUs nvidia-smi sees; [] when there is no driver or no device."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        listing = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if listing.returncode != 0:
        return []
    return [line.strip() for line in listing.stdout.splitlines() if line.strip()]


@dataclass
class GpuSample:
    at: float
    utilization: float
    memory_mb: float


class GpuSampler:
    """Samples GPU 0's utilization every `interval_ms` through nvidia-smi's loop mode."""

    def __init__(self, interval_ms: int = 200) -> None:
        self.samples: list[GpuSample] = []
        self._process = subprocess.Popen(
            [
                "nvidia-smi",
                "--id=0",
                "--query-gpu=utilization.gpu,memory.used",
                "--format=csv,noheader,nounits",
                f"-lms={interval_ms}",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            parts = [p.strip() for p in line.split(",")]
            try:
                self.samples.append(GpuSample(time.monotonic(), float(parts[0]), float(parts[1])))
            except (ValueError, IndexError):
                continue

    def window(self, start: float, end: float) -> dict[str, float]:
        inside = [s for s in self.samples if start <= s.at <= end]
        if not inside:
            return {"gpu_util_mean": float("nan"), "gpu_util_p50": float("nan")}
        utils = [s.utilization for s in inside]
        return {
            "gpu_util_mean": round(statistics.fmean(utils), 1),
            "gpu_util_p50": round(statistics.median(utils), 1),
            "gpu_util_max": max(utils),
            "gpu_mem_max_mb": max(s.memory_mb for s in inside),
            "gpu_samples": len(inside),
        }

    def stop(self) -> None:
        self._process.terminate()
        self._process.wait(timeout=10)


# -- pages ----------------------------------------------------------------------------------------
def document_page(index: int, size: tuple[int, int] = synthetic.BENCHMARK_PAGE_SIZE) -> Image.Image:
    """A business-report page with many layout regions: title, two text columns, a table, a
    footer; the kind of page where per-region serial recognition hurts."""
    width, height = size
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    title = ImageFont.load_default(size=56)
    body = ImageFont.load_default(size=28)
    small = ImageFont.load_default(size=22)
    margin = 110
    draw.text(
        (margin, 90), f"Quarterly Operations Report - Part {index + 1}", font=title, fill="black"
    )
    column_width = (width - 3 * margin) // 2
    y_top = 230
    for column in range(2):
        x = margin + column * (column_width + margin)
        y = y_top
        for paragraph in range(3):
            lines = synthetic.sample_lines(3, offset=index * 18 + column * 9 + paragraph * 3)
            for sentence in lines:
                for chunk in _wrap(draw, sentence, body, column_width):
                    draw.text((x, y), chunk, font=body, fill="black")
                    y += 40
            y += 36
    table_top = 1250
    rows, cols = 6, 4
    cell_w = (width - 2 * margin) // cols
    cell_h = 70
    for r in range(rows + 1):
        draw.line(
            [(margin, table_top + r * cell_h), (width - margin, table_top + r * cell_h)],
            fill="black",
            width=2,
        )
    for c in range(cols + 1):
        draw.line(
            [(margin + c * cell_w, table_top), (margin + c * cell_w, table_top + rows * cell_h)],
            fill="black",
            width=2,
        )
    header = ["Region", "Orders", "Revenue (EUR)", "Growth"]
    for c, text in enumerate(header):
        draw.text((margin + c * cell_w + 16, table_top + 20), text, font=body, fill="black")
    for r in range(1, rows):
        values = [
            f"Area {r + index}",
            f"{120 * r + index}",
            f"{1_284.5 * r:,.2f}",
            f"{r + 2}.{index % 10}%",
        ]
        for c, text in enumerate(values):
            draw.text(
                (margin + c * cell_w + 16, table_top + r * cell_h + 20),
                text,
                font=body,
                fill="black",
            )
    notes_top = table_top + rows * cell_h + 80
    for i, sentence in enumerate(synthetic.sample_lines(4, offset=index * 5 + 11)):
        draw.text((margin, notes_top + i * 40), sentence, font=body, fill="black")
    draw.text((margin, height - 100), f"Confidential - page {index + 1}", font=small, fill="black")
    return image


def _wrap(
    draw: ImageDraw.ImageDraw,
    text: str,
    font: ImageFont.FreeTypeFont | ImageFont.ImageFont,
    width: int,
) -> list[str]:
    words, lines, current = text.split(), [], ""
    for word in words:
        candidate = f"{current} {word}".strip()
        if draw.textlength(candidate, font=font) <= width:
            current = candidate
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def generated_pages(count: int) -> list[PageImage]:
    import numpy as np

    return [
        PageImage(page=i + 1, pixels=np.asarray(document_page(i), dtype=np.uint8))
        for i in range(count)
    ]


def pages_from_files(paths: Sequence[Path]) -> list[PageImage]:
    from idp.document.decode import open_document

    pages: list[PageImage] = []
    for path in paths:
        with open_document(path.read_bytes()) as document:
            for page in document.pages():
                pages.append(PageImage(page=len(pages) + 1, pixels=page.pixels))
    return pages


# -- modes ----------------------------------------------------------------------------------------
@dataclass
class ModeResult:
    mode: str
    pages: int
    wall_s: float
    pages_per_hour: float
    page_latency_s_mean: float
    regions_per_page_mean: float
    gpu: dict[str, float] = field(default_factory=dict)


def run_mode(
    name: str,
    pages: Sequence[PageImage],
    recognize: Callable[[PageImage], PageContent],
    *,
    workers: int,
    sampler: GpuSampler,
) -> tuple[ModeResult, list[PageContent]]:
    latencies: list[float] = []

    def one(page: PageImage) -> PageContent:
        tick = time.perf_counter()
        content = recognize(page)
        latencies.append(time.perf_counter() - tick)
        return content

    start = time.monotonic()
    if workers == 1:
        contents = [one(page) for page in pages]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            contents = list(pool.map(one, pages))
    end = time.monotonic()
    wall = end - start
    result = ModeResult(
        mode=name,
        pages=len(pages),
        wall_s=round(wall, 2),
        pages_per_hour=round(len(pages) * 3600 / wall, 1),
        page_latency_s_mean=round(statistics.fmean(latencies), 2),
        regions_per_page_mean=round(statistics.fmean(len(c.blocks) for c in contents), 1),
        gpu=sampler.window(start, end),
    )
    return result, contents


def page_text(content: PageContent) -> str:
    return " ".join(line.text for line in content.lines)


# -- main -----------------------------------------------------------------------------------------
def gpu_ready() -> str | None:
    """The GPU's name when it can run this benchmark, else None (after saying why)."""
    gpus = gpu_names()
    if not gpus:
        print(
            "no NVIDIA GPU here (nvidia-smi is missing or lists no device): this benchmark "
            "measures PaddleOCR-VL on a GPU and cannot run on this machine",
            file=sys.stderr,
        )
        return None
    from idp.document.ocr.paddle.environment import prepare_paddle_environment

    prepare_paddle_environment()
    import paddle

    if not paddle.device.is_compiled_with_cuda():
        print("paddlepaddle here is a CPU build: install paddlepaddle-gpu", file=sys.stderr)
        return None
    return gpus[0]


def measure(
    pages: Sequence[PageImage], *, concurrency: int
) -> tuple[ModeResult, ModeResult, float, dict[str, Any]]:
    """Start the container's engines, then time serial and concurrent mode on the same pages.

    Returns both mode results, the mean CER between their texts, and the settings used.
    Raises ModelUnavailable when the weights are missing.
    """
    from sagemaker_container.engines import build_paddleocr_vl_engines, warm_up_page
    from sagemaker_container.paddleocr_vl import (
        PaddleOcrVlEngine,
        VlEngineConfig,
        pipeline_models,
    )
    from sagemaker_container.settings import ServerSettings

    os.environ[VlEnv.ENGINE] = VL_ENGINE_PADDLEOCR_VL
    settings = ServerSettings.from_env()
    s3 = None
    if settings.model_cache_bucket:
        import boto3

        s3 = boto3.client("s3")
    engines = build_paddleocr_vl_engines(
        settings, s3=s3, report=lambda phase: print(f"  {phase} ...")
    )
    sampler = GpuSampler()
    try:
        # The reference behaviour: the same pipeline, one region request at a time.
        serial_engine = PaddleOcrVlEngine(
            VlEngineConfig(
                models=pipeline_models(settings.pipeline_version),
                layout_model_dir=Path(engines.details["layout_model_dir"]),
                server_url=engines.details["vlm_server_url"],
                region_concurrency=1,
                device=settings.device,
            )
        )
        warm = warm_up_page()
        serial_engine.recognize(warm)
        for engine in engines.pool.engines:
            engine.recognize(warm)

        def concurrent_recognize(page: PageImage) -> PageContent:
            with engines.pool.lease() as engine:
                return engine.recognize(page)

        serial, serial_out = run_mode(
            "serial", pages, serial_engine.recognize, workers=1, sampler=sampler
        )
        concurrent, concurrent_out = run_mode(
            "concurrent", pages, concurrent_recognize, workers=concurrency, sampler=sampler
        )
        serial_engine.close()
    finally:
        sampler.stop()
        engines.close()
    difference = statistics.fmean(
        character_error_rate(page_text(a), page_text(b))
        for a, b in zip(serial_out, concurrent_out, strict=True)
    )
    used = {
        "pipeline_version": settings.pipeline_version,
        "engine_instances": settings.engine_instances,
        "region_concurrency": settings.region_concurrency,
        "concurrency": concurrency,
    }
    return serial, concurrent, difference, used


def print_table(modes: Sequence[ModeResult]) -> None:
    header = ("mode", "pages", "wall s", "pages/h", "s/page", "regions", "GPU %")
    print(f"{header[0]:<11}" + "".join(f"{h:>9}" for h in header[1:]))
    for mode in modes:
        gpu = mode.gpu.get("gpu_util_mean", float("nan"))
        print(
            f"{mode.mode:<11}{mode.pages:>9}{mode.wall_s:>9.1f}{mode.pages_per_hour:>9.0f}"
            f"{mode.page_latency_s_mean:>9.2f}{mode.regions_per_page_mean:>9.1f}{gpu:>9.1f}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=12, help="generated pages (default 12)")
    parser.add_argument("--input", type=Path, nargs="*", default=[], help="documents instead")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=names.VL_MAX_CONCURRENT_INVOCATIONS,
        help="pages in flight in concurrent mode (SageMaker's concurrent invocations)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    gpu = gpu_ready()
    if gpu is None:
        return EXIT_NO_GPU
    pages = pages_from_files(args.input) if args.input else generated_pages(args.pages)
    print(f"GPU: {gpu}; {len(pages)} pages")
    try:
        serial, concurrent, difference, used = measure(pages, concurrency=args.concurrency)
    except ModelUnavailable as exc:
        print(exc.message, file=sys.stderr)
        return EXIT_NO_WEIGHTS
    speedup = concurrent.pages_per_hour / serial.pages_per_hour
    report: dict[str, Any] = {
        "gpu": gpu,
        **used,
        "modes": [asdict(serial), asdict(concurrent)],
        "speedup": round(speedup, 2),
        "target_speedup": TARGET_SPEEDUP,
        "meets_target": speedup >= TARGET_SPEEDUP,
        "text_difference_cer": round(difference, 4),
    }
    print()
    print_table([serial, concurrent])
    verdict = "meets" if report["meets_target"] else "misses"
    print(
        f"\nspeedup {speedup:.2f}x ({verdict} the {TARGET_SPEEDUP:.0f}x target); "
        f"serial and concurrent texts differ by CER {difference:.4f}"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
