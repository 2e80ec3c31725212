"""bench/generate/envelope.py: the output is a pure function of the arguments, the List
and the envelope agree with the iterators, ``--no-stats`` and ``--captured-at`` do what they say."""

from __future__ import annotations

import json
from datetime import datetime

import orjson

from bench.generate import generate, iter_chunks, iter_items, iter_stats
from tests.bench.generate.helpers import (
    NODES,
    PODS,
    SEED,
    raw_output,
    sample_envelope,
)


def test_same_arguments_same_bytes() -> None:
    again = b"".join(iter_chunks(NODES, PODS, SEED))
    assert again == raw_output()


def test_different_seed_different_output() -> None:
    a = b"".join(iter_chunks(10, 200, 1))
    b = b"".join(iter_chunks(10, 200, 2))
    assert a != b
    assert json.loads(a)["name"] == "synthetic-10n-200p-s1"
    assert json.loads(b)["name"] == "synthetic-10n-200p-s2"


def test_generate_equals_streamed_output() -> None:
    assert orjson.loads(raw_output()) == sample_envelope()


def test_iter_items_and_iter_stats_match_envelope() -> None:
    env = sample_envelope()
    items = [orjson.loads(orjson.dumps(i)) for i in iter_items(NODES, PODS, SEED)]
    assert items == env["objects"]["items"]
    stats = {name: orjson.loads(orjson.dumps(s)) for name, s in iter_stats(NODES, PODS, SEED)}
    assert stats == env["stats"]
    assert list(stats) == list(env["stats"])


def test_captured_at_moves_every_timestamp() -> None:
    base = generate(5, 60, 4)
    later = generate(5, 60, 4, captured_at="2026-11-21T10:00:00+00:00")
    assert later["capturedAt"] == "2026-11-21T10:00:00Z"
    # Same plan, same objects: every time is one day later.
    for a, b in zip(base["objects"]["items"], later["objects"]["items"], strict=True):
        assert a["metadata"]["name"] == b["metadata"]["name"]
        ts_a = datetime.fromisoformat(a["metadata"]["creationTimestamp"])
        ts_b = datetime.fromisoformat(b["metadata"]["creationTimestamp"])
        assert (ts_b - ts_a).total_seconds() == 86400
    assert base["stats"].keys() == later["stats"].keys()


def test_no_stats_option() -> None:
    env = generate(5, 40, 2, stats=False)
    assert "stats" not in env
    assert env["objects"] == generate(5, 40, 2)["objects"]


def test_json_round_trip() -> None:
    small = raw_output(10, 300, 5)
    env = json.loads(small)
    assert json.loads(json.dumps(env)) == env
    assert orjson.loads(orjson.dumps(env)) == env
    assert orjson.dumps(env) + b"\n" == small  # the stream is plain compact JSON
    for item in env["objects"]["items"]:
        assert json.loads(json.dumps(item, sort_keys=True)) == item
