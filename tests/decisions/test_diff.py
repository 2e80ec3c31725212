"""The difference walk (decisions/diff.py) skips subtrees that compare equal; it must list
exactly what a walk of every leaf lists (the reference below, the walk before the shortcut),
on random JSON values with numbers written as ints, floats and booleans."""

from __future__ import annotations

import random

import pytest

from service.decisions.diff import MAX_DIFFERENCES, differences

_MISSING = object()


def _reference(a, b, path: str, out: list[dict]) -> None:
    """Every leaf visited: the walk as it was before subtrees equal in C were skipped."""
    if len(out) >= MAX_DIFFERENCES:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            _reference(a.get(key, _MISSING), b.get(key, _MISSING), f"{path}.{key}", out)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            _reference(
                a[i] if i < len(a) else _MISSING,
                b[i] if i < len(b) else _MISSING,
                f"{path}[{i}]",
                out,
            )
    elif a != b or (
        type(a) is not type(b) and not (isinstance(a, int | float) and isinstance(b, int | float))
    ):
        out.append({"path": path, "stored": _shown(a), "replayed": _shown(b)})


def _shown(value):
    return None if value is _MISSING else value


def reference(a, b) -> list[dict]:
    out: list[dict] = []
    _reference(a, b, "result", out)
    return out[:MAX_DIFFERENCES]


LEAVES = (0, 1, 1.0, 2, 2.5, True, False, None, "a", "b", "", "1")


def _value(rng: random.Random, depth: int):
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        return rng.choice(LEAVES)
    if roll < 0.7:
        return {rng.choice("abcdef"): _value(rng, depth + 1) for _ in range(rng.randint(0, 5))}
    return [_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]


def _mutated(rng: random.Random, value):
    """``value`` with a few of its leaves, keys or items changed (often none)."""
    if isinstance(value, dict):
        out = {k: _mutated(rng, v) for k, v in value.items()}
        if out and rng.random() < 0.1:
            del out[rng.choice(list(out))]
        if rng.random() < 0.1:
            out[rng.choice("abcdefg")] = _value(rng, 3)
        return out
    if isinstance(value, list):
        out = [_mutated(rng, v) for v in value]
        if rng.random() < 0.1:
            out.append(_value(rng, 3))
        return out
    return rng.choice(LEAVES) if rng.random() < 0.15 else value


@pytest.mark.parametrize("seed", range(40))
def test_the_walk_lists_what_every_leaf_would(seed) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        stored = _value(rng, 0)
        replayed = _mutated(rng, stored)
        assert differences(stored, replayed) == reference(stored, replayed)


@pytest.mark.parametrize(
    ("stored", "replayed"),
    [
        ({"a": [1, 2]}, {"a": (1, 2)}),  # a tuple is no list: listed, as before
        ({"a": 1}, {"a": True}),
        ({"a": {"b": 1}}, {"a": {"b": 1.0}}),
        ([{"x": "1"}], [{"x": 1}]),
        ({"a": 1}, {"a": 1, "b": None}),
    ],
)
def test_numbers_missing_keys_and_tuples_as_before(stored, replayed) -> None:
    assert differences(stored, replayed) == reference(stored, replayed)


def test_the_list_stops_at_its_bound() -> None:
    stored = {"n": list(range(500))}
    replayed = {"n": [i + 1 for i in range(500)]}
    assert len(differences(stored, replayed)) == MAX_DIFFERENCES
    assert differences(stored, replayed) == reference(stored, replayed)
