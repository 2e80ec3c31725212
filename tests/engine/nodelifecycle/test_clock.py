"""clock.py on its own: time formatting as the controller logs it."""

from __future__ import annotations

import pytest

from service.engine.nodelifecycle.clock import MILLISECOND, SECOND, format_time


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "1970-01-01T00:00:00Z"),
        (1_700_000_000 * SECOND + 100 * MILLISECOND, "2023-11-14T22:13:20.1Z"),
        (1_700_000_000 * SECOND + 1, "2023-11-14T22:13:20.000000001Z"),
        # Years before 1000 keep four digits (strftime's %Y printed "4-01-01T00:01:00Z",
        # which is no date-time: the fuzzer's `now` of year 4 broke the response schema).
        (-62_040_988_740 * SECOND, "0004-01-01T00:01:00Z"),
    ],
)
def test_format_time(ns, text):
    assert format_time(ns) == text
