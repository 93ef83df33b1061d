"""Runs one command and, when it ends or is told to stop, kills every process it left behind,
including those that escaped its process group or session (`setsid`, a double fork).

LibreOffice runs under this reaper, started as a script (`python -I reaper.py -- soffice …`):
it marks itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so an orphan of the command
is re-parented to it rather than to init, and it asks the kernel to kill it with its own parent
(PR_SET_PDEATHSIG). On exit, or on SIGTERM, it kills its descendants until none is left. In a
warm Lambda sandbox nothing a document started outlives its conversion. Standard library only.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Final, NoReturn

_PR_SET_PDEATHSIG: Final = 1
_PR_SET_CHILD_SUBREAPER: Final = 36
_KILL_ROUNDS: Final = 50


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def descendants(pid: int) -> set[int]:
    """Every live process below `pid`, from /proc's parent links."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            # "pid (comm) state ppid …": the name may hold spaces and parentheses.
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: set[int] = set()
    pending = [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def kill_descendants() -> None:
    """SIGKILL every descendant and reap it, until none is left (a dying parent's children
    come to this process and are killed in the next round)."""
    for _ in range(_KILL_ROUNDS):
        left = descendants(os.getpid())
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        if not left:
            return
        time.sleep(0.02)


def main(argv: list[str]) -> NoReturn:
    command = argv[1:] if argv[:1] == ["--"] else argv
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    def stop(_signum: int, _frame: object) -> None:
        kill_descendants()
        os._exit(128 + signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    code = subprocess.call(command)
    kill_descendants()
    sys.exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
