"""LibreOffice, headless, as a converter of untrusted Office documents to PDF.

Each conversion runs in a directory of its own with a fresh user profile that turns off what a
document could make the converter do: macros never run, links (fields, OLE objects, external
data, linked images) are never updated, formulas are never recalculated on load (the values the
file holds are shown, and a WEBSERVICE call never runs), and any fetch goes to a proxy that
answers nothing. The process gets no credentials in its environment and runs under a reaper
(idp.document.office.reaper) that kills every process it started, even one that left its
session, when it ends or reaches its time limit.

A spreadsheet is exported twice: its cells as shown (CSV, every sheet, formatted as the file
formats them) and its PDF, each sheet on one page when its sheets are small enough for that.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from idp.contract.conversion import Sheet
from idp.contract.errors import ConversionTimeout, CorruptDocument
from idp.contract.names import OFFICE_FORMATS, MediaType

CONVERTER: Final = "LibreOffice"
DEFAULT_TIME_LIMIT_SECONDS: Final = 120.0
# A sheet of at most this many rows is printed on one page of its own (a page per sheet, in the
# workbook's order); a longer one is paginated as LibreOffice prints it, so no page grows past
# what a page may be (idp.document.budgets: at most 100:1, 80 MP).
SINGLE_PAGE_SHEET_ROWS: Final = 300
SINGLE_PAGE_SHEET_COLUMNS: Final = 60
_VERSION_RE: Final = re.compile(r"LibreOffice (\d+(?:\.\d+)+)")
_SHEET_WRITTEN_RE: Final = re.compile(r"^Writing sheet (?P<name>.*) -> (?P<path>.*\.csv)$")
# CSV export: ',' '"' UTF-8, from line 1, standard language, quoted text as text, special numbers
# detected, cells *as shown*, no formulas, spaces kept, every sheet (-1) to a file of its own.
_CSV_FILTER: Final = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false,false,-1"
_PDF_FILTER: Final = "pdf"
_SHEETS_PDF_FILTER: Final = (
    'pdf:calc_pdf_Export:{"SinglePageSheets":{"type":"boolean","value":"true"}}'
)
# soffice runs under this script (standard library only, run isolated: `python -I`).
_REAPER: Final = Path(__file__).with_name("reaper.py")
_STOP_GRACE_SECONDS: Final = 5.0
# A proxy on the discard port: nothing listens there, so any fetch fails at once.
_DEAD_PROXY: Final = "http://127.0.0.1:9"

# The user profile every conversion starts from (LibreOffice's configuration schema:
# officecfg/registry/schema/org/openoffice/Office/{Common,Writer,Calc}.xcs). The link modes are
# the integers LibreOffice's code reads, not the schema's prose: Writer's SwLinkUpdateMode
# (sw/inc/linkenum.hxx) NEVER = 0, MANUAL = 1, AUTOMATIC = 2; Calc's ScLkUpdMode
# (sc/inc/global.hxx) LM_ALWAYS = 0, LM_NEVER = 1, LM_ON_DEMAND = 2.
_PROFILE_SETTINGS: Final = (
    ("/org.openoffice.Office.Common/Security/Scripting", "DisableMacrosExecution", "true"),
    ("/org.openoffice.Office.Common/Security/Scripting", "MacroSecurityLevel", "3"),
    ("/org.openoffice.Office.Common/Security/Scripting", "BlockUntrustedRefererLinks", "true"),
    ("/org.openoffice.Office.Writer/Content/Update", "Link", "0"),
    ("/org.openoffice.Office.Writer/Content/Update", "Field", "false"),
    ("/org.openoffice.Office.Writer/Content/Update", "Chart", "false"),
    ("/org.openoffice.Office.Calc/Content/Update", "Link", "1"),
    ("/org.openoffice.Office.Calc/Formula/Load", "OOXMLRecalcMode", "1"),
    ("/org.openoffice.Office.Calc/Formula/Load", "ODFRecalcMode", "1"),
    ("/org.openoffice.Inet/Settings", "ooInetProxyType", "1"),
    ("/org.openoffice.Inet/Settings", "ooInetHTTPProxyName", "127.0.0.1"),
    ("/org.openoffice.Inet/Settings", "ooInetHTTPProxyPort", "9"),
    ("/org.openoffice.Inet/Settings", "ooInetHTTPSProxyName", "127.0.0.1"),
    ("/org.openoffice.Inet/Settings", "ooInetHTTPSProxyPort", "9"),
    ("/org.openoffice.Inet/Settings", "ooInetNoProxy", ""),
    ("/org.openoffice.Office.Common/Misc", "FirstRun", "false"),
)
PROFILE: Final = "\n".join(
    [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<oor:items xmlns:oor="http://openoffice.org/2001/registry"',
        ' xmlns:xs="http://www.w3.org/2001/XMLSchema"',
        ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">',
        *(
            f'<item oor:path="{path}">\n'
            f' <prop oor:name="{name}" oor:op="fuse"><value>{value}</value></prop></item>'
            for path, name, value in _PROFILE_SETTINGS
        ),
        "</oor:items>\n",
    ]
)


@dataclass(frozen=True)
class Converted:
    """An Office document as PDF, and a spreadsheet's sheets (empty for other documents)."""

    pdf: bytes
    version: str
    seconds: float
    sheets: list[Sheet] = field(default_factory=list)


def soffice_path() -> str:
    """The soffice program on PATH; FileNotFoundError naming the packages when missing."""
    found = shutil.which("soffice") or shutil.which("libreoffice")
    if found is None:
        raise FileNotFoundError(
            "LibreOffice is not installed (soffice is not on PATH): install Debian's "
            "libreoffice-core-nogui and its -writer, -calc and -impress -nogui packages"
        )
    return found


@dataclass(frozen=True)
class LibreOffice:
    """The `soffice` program (Debian's libreoffice-*-nogui) run once per export, `time_limit_s`
    for a whole conversion; its scratch directories under `work_root` (default: the temp
    directory, a function's /tmp)."""

    soffice: str = field(default_factory=soffice_path)  # on PATH, by default
    work_root: Path | None = None
    time_limit_s: float = DEFAULT_TIME_LIMIT_SECONDS

    @functools.cached_property
    def version(self) -> str:
        """LibreOffice's version ("7.4.7.2"), as `soffice --version` prints it."""
        with tempfile.TemporaryDirectory(dir=self.work_root) as scratch:
            done = subprocess.run(
                [self.soffice, "--version"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
                env=_environment(Path(scratch)),
            )
        found = _VERSION_RE.search(done.stdout)
        if found is None:
            raise RuntimeError(f"`{self.soffice} --version` printed {done.stdout!r}")
        return found.group(1)

    def convert(self, data: bytes, media_type: MediaType) -> Converted:
        """`data` (an Office document of `media_type`) as PDF; CorruptDocument when LibreOffice
        cannot read it, ConversionTimeout past the time limit."""
        version = self.version
        deadline = time.monotonic() + self.time_limit_s
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(dir=self.work_root, prefix="convert-") as scratch:
            work = Path(scratch)
            source = work / f"document{OFFICE_FORMATS[media_type]}"
            source.write_bytes(data)
            sheets: list[Sheet] = []
            pdf_filter = _PDF_FILTER
            if media_type.is_spreadsheet:
                sheets = self._sheets(source, work, media_type, deadline)
                if all(_fits_one_page(sheet) for sheet in sheets):
                    pdf_filter = _SHEETS_PDF_FILTER
                # A sheet over a page is printed across pages, none of which shows it whole, so
                # its cells are never given as a table (and were read only up to the limit).
                sheets = [sheet for sheet in sheets if _fits_one_page(sheet)]
            out = work / "pdf"
            self._run(source, pdf_filter, out, work, media_type, deadline)
            pdf = out / f"{source.stem}.pdf"
            if not pdf.is_file() or pdf.stat().st_size == 0:
                raise _unreadable(media_type)
            return Converted(
                pdf=pdf.read_bytes(),
                version=version,
                seconds=time.perf_counter() - started,
                sheets=sheets,
            )

    def _sheets(
        self, source: Path, work: Path, media_type: MediaType, deadline: float
    ) -> list[Sheet]:
        out = work / "csv"
        printed = self._run(source, _CSV_FILTER, out, work, media_type, deadline)
        sheets = []
        for line in printed.splitlines():
            written = _SHEET_WRITTEN_RE.match(line.strip())
            if written is None:
                continue
            path = Path(written["path"])
            if path.parent != out or not path.is_file():
                continue
            sheets.append(Sheet(name=written["name"], rows=read_sheet_csv(path)))
        if not sheets:
            raise _unreadable(media_type)
        return sheets

    def _run(
        self,
        source: Path,
        export: str,
        out: Path,
        work: Path,
        media_type: MediaType,
        deadline: float,
    ) -> str:
        """One `soffice --convert-to` run in a fresh profile; its stdout."""
        profile = work / f"profile-{out.name}"
        (profile / "user").mkdir(parents=True)
        (profile / "user" / "registrymodifications.xcu").write_text(PROFILE, encoding="utf-8")
        command = [
            self.soffice,
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--invisible",
            "--nologo",
            "--nodefault",
            "--nolockcheck",
            "--norestore",
            "--convert-to",
            export,
            "--outdir",
            str(out),
            str(source),
        ]
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _timed_out(media_type, self.time_limit_s)
        # Under the reaper, in a session of its own: at the limit, or when soffice ends, every
        # process it started goes with it.
        process = subprocess.Popen(
            [sys.executable, "-I", str(_REAPER), "--", *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=_environment(work),
            cwd=work,
            start_new_session=True,
        )
        try:
            stdout, _ = process.communicate(timeout=remaining)
        except subprocess.TimeoutExpired:
            raise _timed_out(media_type, self.time_limit_s) from None
        finally:
            _stop(process)
        return stdout


def _environment(work: Path) -> dict[str, str]:
    """What soffice sees: a home and temp of its own, a dead proxy, and nothing of the function's
    environment (its AWS credentials least of all)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(work),
        "TMPDIR": str(work),
        "LANG": "C.UTF-8",
        "SAL_USE_VCLPLUGIN": "svp",
        "http_proxy": _DEAD_PROXY,
        "https_proxy": _DEAD_PROXY,
        "HTTP_PROXY": _DEAD_PROXY,
        "HTTPS_PROXY": _DEAD_PROXY,
        "no_proxy": "",
    }


def _stop(process: subprocess.Popen[str]) -> None:
    """Ask the reaper to kill what soffice started (SIGTERM), then kill its group outright."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=_STOP_GRACE_SECONDS)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def read_sheet_csv(path: Path) -> list[list[str]]:
    """A sheet's CSV, streamed: its rows (trimmed) while it may still fit one page; once it
    cannot (a row past SINGLE_PAGE_SHEET_ROWS with text, a cell past the columns, a field
    beyond the csv module's limit), the rows read so far and one more, so `_fits_one_page`
    says no and no more of the file is read."""
    rows: list[list[str]] = []
    with path.open(encoding="utf-8", newline="") as table:
        try:
            for row in csv.reader(table):
                kept, beyond = row[:SINGLE_PAGE_SHEET_COLUMNS], row[SINGLE_PAGE_SHEET_COLUMNS:]
                if any(cell.strip() for cell in beyond):
                    return _oversized(rows)
                rows.append(kept)
                if len(rows) > SINGLE_PAGE_SHEET_ROWS and any(c.strip() for c in row):
                    return _oversized(rows)
        except csv.Error:  # a field over csv.field_size_limit(): no page shows such a cell
            return _oversized(rows)
    return _trimmed(rows)


def _oversized(rows: list[list[str]]) -> list[list[str]]:
    """Rows that `_fits_one_page` refuses, whatever was read."""
    return [*rows, *([[]] * (SINGLE_PAGE_SHEET_ROWS + 1 - len(rows)))][: SINGLE_PAGE_SHEET_ROWS + 1]


def _trimmed(rows: list[list[str]]) -> list[list[str]]:
    """Rows without their trailing empty cells, and no empty rows at the end."""
    rows = [list(row) for row in rows]
    while rows and not any(cell.strip() for cell in rows[-1]):
        rows.pop()
    width = max(
        (max((i + 1 for i, cell in enumerate(row) if cell.strip()), default=0) for row in rows),
        default=0,
    )
    return [row[:width] + [""] * (width - len(row[:width])) for row in rows]


def _fits_one_page(sheet: Sheet) -> bool:
    columns = max((len(row) for row in sheet.rows), default=0)
    return len(sheet.rows) <= SINGLE_PAGE_SHEET_ROWS and columns <= SINGLE_PAGE_SHEET_COLUMNS


def _unreadable(media_type: MediaType) -> CorruptDocument:
    return CorruptDocument(
        f"the {media_type.label} file cannot be read: {CONVERTER} could not open it as a "
        f"{media_type.label} document (damaged, or not what its content claims)"
    )


def _timed_out(media_type: MediaType, limit_s: float) -> ConversionTimeout:
    return ConversionTimeout(
        f"converting the {media_type.label} file to PDF took longer than {limit_s:.0f} s and "
        "was stopped"
    )
