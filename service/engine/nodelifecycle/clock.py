"""Time as the node lifecycle controller counts it: integer nanoseconds since the Unix epoch.

Go's ``time.Time`` and ``time.Duration`` are nanosecond integers; every comparison the
controller makes (``now.After(probe.Add(grace))``, token-bucket refills) is done on them.
The engine therefore works on ``int`` nanoseconds throughout and converts at the edges:
``to_ns`` for model datetimes, ``format_time`` for results. (Go duration strings are parsed
by the engine's one parser, ``service.engine.duration.parse_go_duration``.)
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = ["MILLISECOND", "SECOND", "format_time", "from_ns", "to_ns"]

NANOSECOND = 1
MICROSECOND = 1_000
MILLISECOND = 1_000_000
SECOND = 1_000_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MICROSECOND = timedelta(microseconds=1)


def to_ns(moment: datetime) -> int:
    """A model datetime as Unix nanoseconds (a naive datetime is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return ((moment - _EPOCH) // _ONE_MICROSECOND) * MICROSECOND


def from_ns(ns: int) -> datetime:
    """Unix nanoseconds as an aware UTC datetime (sub-microsecond digits are dropped)."""
    return _EPOCH + timedelta(microseconds=ns // MICROSECOND)


def format_time(ns: int) -> str:
    """RFC 3339 in UTC with a ``Z``; fractional seconds only when non-zero, trailing zeros
    trimmed, the year in four digits (what Go's time.RFC3339Nano prints; strftime's ``%Y``
    drops the leading zeros of years before 1000)."""
    seconds, fraction = divmod(ns, SECOND)
    moment = _EPOCH + timedelta(seconds=seconds)
    text = moment.replace(tzinfo=None).isoformat(timespec="seconds")
    if fraction:
        text += "." + f"{fraction:09d}".rstrip("0")
    return text + "Z"
