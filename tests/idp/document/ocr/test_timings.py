"""The step clock: each step's own time, nested steps apart, and nothing outside a clock."""

from __future__ import annotations

import time

from idp.document.ocr.timings import measuring, step, time_calls


def test_a_step_counts_its_own_time_without_the_steps_inside_it() -> None:
    with measuring() as seconds:
        with step("outer"):
            time.sleep(0.05)
            with step("inner"):
                time.sleep(0.1)
        with step("inner"):
            time.sleep(0.05)
    assert 0.04 <= seconds["outer"] < 0.09
    assert 0.14 <= seconds["inner"] < 0.25


def test_without_a_clock_a_step_records_nothing() -> None:
    with step("alone"):
        pass
    with measuring() as seconds:
        pass
    assert dict(seconds) == {}


class _Model:
    def process(self, value: int) -> int:
        time.sleep(0.02)
        return value * 2


def test_an_adapters_method_becomes_a_step_once() -> None:
    model = _Model()
    time_calls(model, "process", "recognition")
    time_calls(model, "process", "recognition")
    with measuring() as seconds:
        assert model.process(3) == 6
    assert 0.015 <= seconds["recognition"] < 0.06
