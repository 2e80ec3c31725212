"""Path-by-path differences between two JSON values (replay reports)."""

from __future__ import annotations

MAX_DIFFERENCES = 200


def differences(stored, replayed, path: str = "result") -> list[dict]:
    out: list[dict] = []
    _walk(stored, replayed, path, out)
    return out[:MAX_DIFFERENCES]


def _walk(a, b, path: str, out: list[dict]) -> None:
    if len(out) >= MAX_DIFFERENCES:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        if a == b:  # compared in C: a changed decision differs in a few of its entries
            return
        for key in list(a) + [k for k in b if k not in a]:
            _walk(a.get(key, _MISSING), b.get(key, _MISSING), f"{path}.{key}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if a == b:
            return
        for i in range(max(len(a), len(b))):
            _walk(
                a[i] if i < len(a) else _MISSING,
                b[i] if i < len(b) else _MISSING,
                f"{path}[{i}]",
                out,
            )
    elif a != b or (
        type(a) is not type(b) and not (isinstance(a, int | float) and isinstance(b, int | float))
    ):
        out.append({"path": path, "stored": _show(a), "replayed": _show(b)})


class _Missing:
    pass


_MISSING = _Missing()


def _show(value):
    return None if value is _MISSING else value
