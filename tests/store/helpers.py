"""Shared helpers for the store tests."""

from __future__ import annotations

from service.store import records


def append_record(session, i: int, **kw):
    """Record ``i``: a request and a result of varied JSON (non-ASCII, unsorted keys), two
    subjects, one of them repeated."""
    return records.append(
        session,
        kind="admission",
        snapshot_id=None,
        key_id=kw.get("key_id"),
        request={"i": i, "pod": {"name": f"p-é-{i}", "labels": {"b": "2", "a": "1"}}},
        result={"admitted": i % 2 == 0, "score": 0.25 * i, "reasons": []},
        engine_version="test",
        node_names=[f"n{i % 3}", f"n{i % 3}"],
        pods=[f"default/p{i}"],
    )
