"""What `idp` draws beside a downloaded result: result.html (the viewer) and a page overlay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from devkit.cli.common import err
from devkit.client import PipelineClient
from idp.contract import names
from idp.contract.errors import JobError
from idp.contract.job_record import JobRecord
from idp.contract.jobs import JobOptions

RESULT_HTML = "result.html"  # beside result.json: written by the CLI, not by the pipeline


def write_views(
    client: PipelineClient, record: JobRecord, result_path: Path, overlay_page: int = 0
) -> dict[str, Any]:
    """result.html beside result.json, and page `overlay_page`'s overlay PNG (0: none).

    Returns their paths, or why one could not be drawn (`viewer_error`, `overlay_error`): the
    job's result stands without them.
    """
    from devkit.overlay import render_overlay
    from devkit.viewer import render_viewer

    document = json.loads(result_path.read_text())
    options = JobOptions.model_validate(record.get("options") or {})
    views: dict[str, Any] = {"viewer": None, "overlay": None}
    try:
        pages = _pages_document(client, record, result_path, document)
        html = result_path.with_name(RESULT_HTML)
        html.write_text(render_viewer(pages, document, options=options), encoding="utf-8")
        views["viewer"] = str(html)
        if overlay_page and overlay_page <= len(document.get("pages", [])):
            target = result_path.with_name(f"page-{overlay_page}-overlay.png")
            render_overlay(pages, document, overlay_page, options=options).save(target)
            views["overlay"] = str(target)
    except (JobError, LookupError, OSError, ValueError) as exc:
        failed = "overlay_error" if views["viewer"] else "viewer_error"
        views[failed] = f"{type(exc).__name__}: {exc}"
    return views


def _pages_document(
    client: PipelineClient, record: JobRecord, result_path: Path, document: dict[str, Any]
) -> bytes:
    """The pages the job read: its input, or an Office document's conversion (result.pdf)."""
    if (document.get("source") or {}).get("conversion") is None:
        return client.input_bytes(record)
    pdf = result_path.with_name(names.RESULT_PDF)
    if not pdf.is_file():
        raise LookupError("an Office document's pages are its result.pdf, which the job left out")
    return pdf.read_bytes()


def open_viewer(path: Path) -> None:
    """Open result.html in the user's browser, or say where it is where none can be started."""
    import webbrowser

    if not webbrowser.open(path.resolve().as_uri()):
        err.print(f"no browser to open; the viewer is {path}")
