"""Nothing a document starts outlives its conversion: a process that leaves soffice's session
(setsid after a double fork) is killed when soffice ends, and at the time limit. The control
shows that killing soffice's process group alone would leave it running."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from idp.contract.errors import ConversionTimeout
from idp.contract.names import MediaType
from idp.document.office.libreoffice import LibreOffice

# A STAND-IN for soffice that a document took over: it starts a process that escapes its session
# (the pid goes to PID_FILE), writes a PDF, and then ends or, given --hang, runs on.
_ESCAPING_SOFFICE = """#!{python}
import os, sys, time
args = sys.argv[1:]
if args == ["--version"]:
    print("LibreOffice 7.4.7.2 (stand-in)")
    sys.exit(0)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open({pid_file!r} + ".part", "w") as out:
            out.write(str(os.getpid()))
        os.rename({pid_file!r} + ".part", {pid_file!r})
        time.sleep(300)
    os._exit(0)
while not os.path.exists({pid_file!r}):
    time.sleep(0.01)
outdir = args[args.index("--outdir") + 1]
os.makedirs(outdir, exist_ok=True)
stem = os.path.splitext(os.path.basename(args[-1]))[0]
with open(os.path.join(outdir, stem + ".pdf"), "wb") as pdf:
    pdf.write(b"%PDF-1.4 stand-in")
if {hang!r}:
    time.sleep(300)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def escaped(tmp_path: Path) -> Iterator[Path]:
    """Where the escaping process writes its pid; it is killed afterwards, whatever happened."""
    pid_file = tmp_path / "escaped.pid"
    yield pid_file
    if pid_file.exists():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def _soffice(tmp_path: Path, pid_file: Path, *, hang: bool = False) -> str:
    script = tmp_path / "soffice"
    script.write_text(
        _ESCAPING_SOFFICE.format(python=sys.executable, pid_file=str(pid_file), hang=hang)
    )
    script.chmod(0o755)
    return str(script)


def test_a_process_that_left_soffices_session_is_killed_when_soffice_ends(
    tmp_path: Path, escaped: Path
) -> None:
    libreoffice = LibreOffice(soffice=_soffice(tmp_path, escaped), work_root=tmp_path)

    converted = libreoffice.convert(b"PK stand-in", MediaType.DOCX)

    assert converted.pdf.startswith(b"%PDF")
    assert not _alive(int(escaped.read_text()))


def test_a_process_that_left_soffices_session_is_killed_at_the_time_limit(
    tmp_path: Path, escaped: Path
) -> None:
    libreoffice = LibreOffice(
        soffice=_soffice(tmp_path, escaped, hang=True), work_root=tmp_path, time_limit_s=3.0
    )

    with pytest.raises(ConversionTimeout):
        libreoffice.convert(b"PK stand-in", MediaType.DOCX)

    assert not _alive(int(escaped.read_text()))


def test_control_killing_the_process_group_alone_leaves_the_escaped_process_running(
    tmp_path: Path, escaped: Path
) -> None:
    out = tmp_path / "out"
    process = subprocess.Popen(
        [_soffice(tmp_path, escaped), "--outdir", str(out), str(tmp_path / "document.docx")],
        start_new_session=True,
    )
    process.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    time.sleep(0.2)

    assert _alive(int(escaped.read_text()))
