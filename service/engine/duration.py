"""Go's time.Duration as text: the one parser and printer the engine's components share (the
kubelet's eviction flags and grace periods, the node lifecycle controller's flags).

Mirrors time.ParseDuration and time.Duration.String (Go 1.24, as built into k8s 1.35).
"""

from __future__ import annotations

__all__ = ["NS_PER_SECOND", "format_go_duration", "parse_go_duration"]

NS_PER_SECOND = 1_000_000_000

_DURATION_UNITS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # U+00B5 micro sign
    "\u03bcs": 1_000,  # U+03BC Greek mu
    "ms": 1_000_000,
    "s": NS_PER_SECOND,
    "m": 60 * NS_PER_SECOND,
    "h": 3600 * NS_PER_SECOND,
}
_MAX_INT64 = 2**63 - 1


def parse_go_duration(text: str) -> int:
    """time.ParseDuration: ``[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+`` → nanoseconds (int64).

    The fractional part goes through float64 exactly as Go computes it. Error texts are Go's
    (``time: invalid duration "x"``, ``time: missing unit in duration "1"``,
    ``time: unknown unit "d" in duration "1d"``).
    """
    orig = text
    quoted = f'"{orig}"'
    s = text
    negative = False
    if s and s[0] in "+-":
        negative = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if s == "":
        raise ValueError(f"time: invalid duration {quoted}")
    total = 0
    while s:
        if not (s[0] == "." or s[0].isdigit()):
            raise ValueError(f"time: invalid duration {quoted}")
        i = 0
        while i < len(s) and "0" <= s[i] <= "9":
            i += 1
        pre = i > 0
        whole = int(s[:i]) if pre else 0
        s = s[i:]
        frac, scale, post = 0, 1.0, False
        if s.startswith("."):
            s = s[1:]
            i = 0
            while i < len(s) and "0" <= s[i] <= "9":
                i += 1
            post = i > 0
            digits = s[:i]
            s = s[i:]
            # leadingFraction: stop accumulating once more digits would overflow int64.
            for ch in digits:
                if frac > (_MAX_INT64 - 9) // 10:
                    break
                frac = frac * 10 + int(ch)
                scale *= 10
        if not pre and not post:
            raise ValueError(f"time: invalid duration {quoted}")
        i = 0
        while i < len(s) and s[i] != "." and not ("0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise ValueError(f"time: missing unit in duration {quoted}")
        unit_name = s[:i]
        s = s[i:]
        unit = _DURATION_UNITS.get(unit_name)
        if unit is None:
            raise ValueError(f'time: unknown unit "{unit_name}" in duration {quoted}')
        if whole > _MAX_INT64 // unit:
            raise ValueError(f"time: invalid duration {quoted}")
        value = whole * unit
        if frac:
            value += int(float(frac) * (float(unit) / scale))
        total += value
        if total > _MAX_INT64:
            raise ValueError(f"time: invalid duration {quoted}")
    return -total if negative else total


def _fraction_digits(value: int, precision: int) -> str:
    whole, rest = divmod(value, 10**precision)
    if rest == 0:
        return str(whole)
    digits = str(rest).rjust(precision, "0").rstrip("0")
    return f"{whole}.{digits}"


def format_go_duration(ns: int) -> str:
    """time.Duration.String: ``1m30s``, ``0s``, ``1.5s``, ``500ms``, ``1h0m0s``."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    u = abs(ns)
    if u < NS_PER_SECOND:
        if u < 1_000:
            return f"{sign}{u}ns"
        if u < 1_000_000:
            return f"{sign}{_fraction_digits(u, 3)}\u00b5s"
        return f"{sign}{_fraction_digits(u, 6)}ms"
    minutes, rest = divmod(u, 60 * NS_PER_SECOND)
    out = f"{_fraction_digits(rest, 9)}s"
    if minutes:
        hours, minutes = divmod(minutes, 60)
        out = f"{minutes}m{out}"
        if hours:
            out = f"{hours}h{out}"
    return sign + out
