"""One Office document converted in a fresh interpreter, for benchmarks/office.py: the
conversion's own time, and the peak RSS (VmHWM) of every LibreOffice process (soffice.bin)
as it runs, read by a thread.

    python -m benchmarks.office_measure DOCUMENT SOFFICE OUT.pdf SHEETS.json
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

from idp.document.media_types import detect_media_type
from idp.document.office.libreoffice import LibreOffice


def soffice_peak_kb(done: threading.Event, peak: list[int]) -> None:
    """Until `done`, the highest VmHWM of any soffice.bin process, in KB, kept in peak[0]."""
    while not done.is_set():
        for status in Path("/proc").glob("[0-9]*/status"):
            try:
                lines = status.read_text().splitlines()
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in lines if ":" in line)
            if fields.get("Name", "").strip() == "soffice.bin" and "VmHWM" in fields:
                peak[0] = max(peak[0], int(fields["VmHWM"].split()[0]))
        time.sleep(0.02)


def main() -> None:
    document, soffice, pdf_out, sheets_out = sys.argv[1:5]
    data = Path(document).read_bytes()
    office = LibreOffice(soffice=soffice)
    office.version  # noqa: B018 - LibreOffice starts here, outside the timed conversion
    peak, done = [0], threading.Event()
    watcher = threading.Thread(target=soffice_peak_kb, args=(done, peak), daemon=True)
    watcher.start()
    started = time.perf_counter()
    converted = office.convert(data, detect_media_type(data))
    seconds = time.perf_counter() - started
    done.set()
    watcher.join()
    Path(pdf_out).write_bytes(converted.pdf)
    Path(sheets_out).write_text(json.dumps([sheet.model_dump() for sheet in converted.sheets]))
    print(json.dumps({"seconds": seconds, "peak_rss_mb": peak[0] / 1024}))


if __name__ == "__main__":
    main()
