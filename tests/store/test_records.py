"""The decision record chain: append, verify, tamper detection, prune, pagination."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import update

from service.store import records
from service.store.models import AuditState, DecisionRow


def _append(session, n: int, **kw):
    return [
        records.append(
            session,
            kind="admission",
            snapshot_id=None,
            key_id=None,
            request={"i": i, **kw},
            result={"admitted": i % 2 == 0, "score": 0.1 * i},
            engine_version="test",
            node_names=[f"n{i % 3}"],
            pods=[f"default/p{i}"],
        )
        for i in range(n)
    ]


def test_chain_verifies_and_detects_an_edited_row(app):
    db = app.extensions["verdict.db"]
    with db.session(write=True) as session:
        rows = _append(session, 5)
    with db.session() as session:
        assert records.verify(session) == records.Verification(True, 5, None)
    # Edit a row behind the service's back.
    with db.session(write=True) as session:
        session.execute(
            update(DecisionRow)
            .where(DecisionRow.seq == rows[2].seq)
            .values(result={"admitted": True})
        )
    with db.session() as session:
        outcome = records.verify(session)
    assert not outcome.ok and outcome.first_bad_id == rows[2].id


def test_deleted_row_breaks_the_chain_at_the_next(app):
    db = app.extensions["verdict.db"]
    with db.session(write=True) as session:
        rows = _append(session, 4)
    with db.session(write=True) as session:
        session.query(DecisionRow).filter(DecisionRow.seq == rows[1].seq).delete()
    with db.session() as session:
        assert records.verify(session).first_bad_id == rows[2].id


def test_prune_keeps_the_chain_verifiable(app):
    db = app.extensions["verdict.db"]
    with db.session(write=True) as session:
        old = _append(session, 3)
        session.flush()
        session.execute(
            update(DecisionRow)
            .where(DecisionRow.seq <= old[-1].seq)
            .values(created_at=datetime(2020, 1, 1, tzinfo=UTC))
        )
    # Backdating changed hashed content; rebuild those hashes as if written then.
    with db.session(write=True) as session:
        prev = records.GENESIS_HASH
        for row in session.query(DecisionRow).order_by(DecisionRow.seq):
            row.prev_hash = prev
            row.record_hash = records.content_hash(prev, row)
            prev = row.record_hash
        state = session.get(AuditState, 1)
        state.head_seq, state.head_hash, state.head_prev_hash = row.seq, prev, row.prev_hash
    with db.session(write=True) as session:
        _append(session, 2)
    with db.session(write=True) as session:
        prune = records.prune(session, datetime(2021, 1, 1, tzinfo=UTC), "test")
    assert prune.result["deleted"] == 3
    with db.session() as session:
        outcome = records.verify(session)
        assert outcome.ok and outcome.records == 3  # two kept plus the prune record


def test_filters_and_keyset_pages(app):
    db = app.extensions["verdict.db"]
    with db.session(write=True) as session:
        rows = _append(session, 7)
    with db.session() as session:
        by_node = records.page(session, records.Filters(node_name="n1"), 10, None)
        assert [r.id for r in by_node] == [rows[4].id, rows[1].id]
        by_pod = records.page(session, records.Filters(pod="default/p3"), 10, None)
        assert [r.id for r in by_pod] == [rows[3].id]
        first = records.page(session, records.Filters(), 3, None)
        second = records.page(session, records.Filters(), 3, first[-1].seq)
        assert [r.id for r in first + second] == [r.id for r in rows[::-1][:6]]
        future = records.page(
            session, records.Filters(since=datetime.now(UTC) + timedelta(hours=1)), 10, None
        )
        assert future == []


def test_non_finite_numbers_are_refused_alike_on_every_database(app):
    """PostgreSQL's json type refuses Infinity; SQLite is made to refuse it too, so stored
    records are standard JSON everywhere and nothing half-written remains."""
    import pytest

    db = app.extensions["verdict.db"]
    with (
        pytest.raises(Exception, match=r"(?i)infinity|out of range|not JSON compliant"),
        db.session(write=True) as session,
    ):
        records.append(
            session,
            kind="admission",
            snapshot_id=None,
            key_id=None,
            request={},
            result={"score": float("inf")},
            engine_version="test",
        )
    with db.session() as session:
        assert records.verify(session) == records.Verification(True, 0, None)
