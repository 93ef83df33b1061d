"""Background loops of the emulated services, each in a thread of its own until stop."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

logger = logging.getLogger("devkit.local")


class Loops:
    """Threads running long-lived loops, each restarted after an error until `stop` is set.

    An emulator hiccup (a refused connection, a throttled call) must not stall the pipeline: on
    AWS these services keep going.
    """

    def __init__(self, stop: threading.Event) -> None:
        self._stop = stop
        self._threads: list[threading.Thread] = []

    def spawn(self, name: str, loop: Callable[[], None]) -> None:
        thread = threading.Thread(target=self._guard, args=(name, loop), name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def join(self, timeout_s: float = 30) -> None:
        for thread in self._threads:
            thread.join(timeout=timeout_s)

    def _guard(self, name: str, loop: Callable[[], None]) -> None:
        while not self._stop.is_set():
            try:
                loop()
                return
            except Exception:
                logger.exception("loop %s failed; restarting it", name)
                time.sleep(0.5)
