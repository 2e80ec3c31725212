"""Python's cyclic garbage collector, paused around work that makes many long-lived objects
and no cyclic garbage: a collection in the middle would scan them all and find nothing.

Process-wide (the collector has one switch), and always restored: the pause lasts only as
long as the work inside it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused(pause: bool = True) -> Iterator[None]:
    """The collector disabled inside (when ``pause``), enabled again after if it was."""
    collecting = pause and gc.isenabled()
    if collecting:
        gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
