"""RapidOCR on a list of images, for benchmarks/real_documents.py: runs in RapidOCR's own venv.

    <rapidocr venv>/bin/python benchmarks/rapidocr_worker.py JOBS.json OUT.json THREADS REPEAT

JOBS.json is a list of {"id", "image"}; OUT.json gets, per image, the text (RapidOCR's lines in
the order it returns them), the wall seconds of the fastest of REPEAT reads (engine load
excluded) and the engine's versions. Only the standard library and RapidOCR are imported here:
the venv holds nothing else of this project.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
import time
from pathlib import Path
from typing import Any


def main() -> None:
    jobs_path, out_path, threads, repeat = sys.argv[1:5]
    from rapidocr import RapidOCR  # type: ignore[import-not-found, unused-ignore]

    tick = time.perf_counter()
    engine = RapidOCR(
        params={
            "EngineConfig.onnxruntime.intra_op_num_threads": int(threads),
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            "Global.log_level": "warning",
        }
    )
    load_s = time.perf_counter() - tick
    jobs: list[dict[str, str]] = json.loads(Path(jobs_path).read_text())
    if jobs:
        engine(jobs[0]["image"])  # warm-up: the first read pays for lazy initialisation
    pages: dict[str, Any] = {}
    for job in jobs:
        walls = []
        for _ in range(max(1, int(repeat))):
            tick = time.perf_counter()
            result = engine(job["image"])
            walls.append(time.perf_counter() - tick)
        texts = [] if result.txts is None else [text.strip() for text in result.txts]
        pages[job["id"]] = {"text": "\n".join(texts), "seconds": min(walls)}
        print(f"rapidocr {job['id']}: {min(walls):.2f} s", file=sys.stderr, flush=True)
    versions = {name: importlib.metadata.version(name) for name in ("rapidocr", "onnxruntime")}
    report = {"versions": versions, "load_seconds": round(load_s, 2), "pages": pages}
    Path(out_path).write_text(json.dumps(report, ensure_ascii=False))


if __name__ == "__main__":
    main()
