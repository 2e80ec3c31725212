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


# Four records an hour apart, and times that name the same instants in other offsets.
HOURS = (
    "2026-11-27T08:00:00Z",
    "2026-11-27T09:00:00Z",
    "2026-11-27T10:00:00Z",
    "2026-11-27T11:00:00Z",
)
# (a time, how many of HOURS come strictly before it)
OFFSET_TIMES = (
    ("2026-11-27T23:30:00+14:00", 2),  # 09:30Z: a text comparison would see it after all
    ("2026-11-26T21:30:00-12:00", 2),  # 09:30Z: a text comparison would see it before all
    ("2026-11-27T09:00:00Z", 1),
    ("2026-11-27T09:00:00.000001Z", 2),
    ("2026-11-27T10:59:59.999999+00:00", 3),
    ("2026-11-27T11:00:00.5-00:30", 4),  # 11:30:00.5Z
)


def append_at_hours(db) -> list[str]:
    """HOURS as records, oldest first; their ids."""
    with db.session(write=True) as session:
        ids = [append_record(session, i).id for i in range(len(HOURS))]
    return at_hours(db, ids)


def at_hours(db, ids: list[str]) -> list[str]:
    """Give the records ``ids`` (oldest first) the times HOURS, after they were appended."""
    from datetime import datetime

    from sqlalchemy import update

    from service.store.models import DecisionRow

    with db.session(write=True) as session:
        for record_id, stamp in zip(ids, HOURS, strict=True):
            session.execute(
                update(DecisionRow)
                .where(DecisionRow.id == record_id)
                .values(created_at=datetime.fromisoformat(stamp))
            )
    return ids
