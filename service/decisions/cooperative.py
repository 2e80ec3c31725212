"""Long CPU work that lets a gevent worker's other requests run.

Under `verdict serve`'s gevent workers (service/serving.py) CPU work never yields on its own:
a long impact page or a long what-if run (schedule, capacity, drain) would hold every other
connection of its worker, and its heartbeat, until it ends. ``Cooperative`` is called between
units of work and hands the worker over through ``time.sleep(0)`` (gevent's cooperative switch
once the standard library is patched) at most once per ``YIELD_SECONDS``. Elsewhere (a plain
worker, the CLI) it does nothing: there ``sleep(0)`` is a system call that gives the core away
(4 ms a call on the loaded 2-core machine: bench/RESULTS.md, issue 26).
"""

from __future__ import annotations

import time

YIELD_SECONDS = 0.02


def under_gevent() -> bool:
    """Whether the worker runs on gevent's patched standard library (`verdict serve`)."""
    try:
        from gevent import monkey
    except ImportError:  # pragma: no cover - gevent is a dependency of `verdict serve`
        return False
    return monkey.is_module_patched("time")


class Cooperative:
    """Called between units of work: yields to the worker's other greenlets once per slice."""

    def __init__(self) -> None:
        self.enabled = under_gevent()
        self.next_yield = time.monotonic() + YIELD_SECONDS

    def __call__(self) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now >= self.next_yield:
            time.sleep(0)
            self.next_yield = time.monotonic() + YIELD_SECONDS
