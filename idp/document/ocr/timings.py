"""Where a page's time goes: a clock that the page path and the engine adapters report their
steps to (`step`), each step's own time, without the steps nested inside it (a re-read's
recognition counts as recognition, not as the step that asked for it).

`measuring()` starts a clock for the calls made inside it, in this thread; with none started,
`step` costs nothing but a lookup. The page path's steps are named in idp.document.ocr.page;
an adapter names the engine's own (detection, recognition) with `time_calls`.
"""

from __future__ import annotations

import functools
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


@dataclass
class _Clock:
    seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    nested: list[float] = field(default_factory=list)  # per open step: its children's time


_clock: ContextVar[_Clock | None] = ContextVar("idp_step_clock", default=None)


@contextmanager
def measuring() -> Iterator[dict[str, float]]:
    """A clock for the steps run inside: yields {step: seconds}, filled as they end."""
    clock = _Clock()
    token = _clock.set(clock)
    try:
        yield clock.seconds
    finally:
        _clock.reset(token)


@contextmanager
def step(name: str) -> Iterator[None]:
    """Time the block as step `name`, less the steps nested in it."""
    clock = _clock.get()
    if clock is None:
        yield
        return
    clock.nested.append(0.0)
    started = time.perf_counter()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - started
        children = clock.nested.pop()
        clock.seconds[name] += elapsed - children
        if clock.nested:
            clock.nested[-1] += elapsed


def time_calls(target: Any, method: str, name: str) -> None:
    """Make each call of `target.method` (an instance's own) a step `name`. Idempotent."""
    original: Callable[..., Any] = getattr(target, method)
    if getattr(original, "__idp_step__", None) == name:
        return

    @functools.wraps(original)
    def timed(*args: Any, **kwargs: Any) -> Any:
        with step(name):
            return original(*args, **kwargs)

    timed.__idp_step__ = name  # type: ignore[attr-defined]
    setattr(target, method, timed)
