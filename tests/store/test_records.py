"""The decision record chain: append, verify, tamper detection, prune, pagination; the
chain's head in audit_state (one-statement appends, concurrent writers, tail truncation)."""

from __future__ import annotations

import hashlib
import threading
from datetime import UTC, datetime, timedelta

import orjson
from sqlalchemy import delete, select, update

from service.extensions import extensions
from service.store import records
from service.store.models import AuditState, DecisionRow, DecisionSubject
from tests.store.helpers import append_record


def _rechain(session, rows: list) -> None:
    """Rebuild the hashes of ``rows`` (the whole chain, in order) and the chain head after
    a test rewrote hashed content, as if they had been written so."""
    prev = records.GENESIS_HASH
    for row in rows:
        row.prev_hash = prev
        row.record_hash = records.content_hash(prev, row)
        prev = row.record_hash
    state = session.get(AuditState, 1)
    state.head_seq, state.head_hash, state.head_prev_hash = row.seq, prev, row.prev_hash


def test_chain_verifies_and_detects_an_edited_row(app):
    db = extensions(app).db
    with db.session(write=True) as session:
        rows = [append_record(session, i) for i in range(5)]
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
    db = extensions(app).db
    with db.session(write=True) as session:
        rows = [append_record(session, i) for i in range(4)]
    with db.session(write=True) as session:
        session.query(DecisionRow).filter(DecisionRow.seq == rows[1].seq).delete()
    with db.session() as session:
        assert records.verify(session).first_bad_id == rows[2].id


def test_prune_keeps_the_chain_verifiable(app):
    db = extensions(app).db
    with db.session(write=True) as session:
        old = [append_record(session, i) for i in range(3)]
        session.flush()
        session.execute(
            update(DecisionRow)
            .where(DecisionRow.seq <= old[-1].seq)
            .values(created_at=datetime(2020, 1, 1, tzinfo=UTC))
        )
    # Backdating changed hashed content; rebuild those hashes as if written then.
    with db.session(write=True) as session:
        _rechain(session, session.query(DecisionRow).order_by(DecisionRow.seq).all())
    with db.session(write=True) as session:
        [append_record(session, i) for i in range(2)]
    with db.session(write=True) as session:
        prune = records.prune(session, datetime(2021, 1, 1, tzinfo=UTC), "test")
    assert prune.result["deleted"] == 3
    with db.session() as session:
        outcome = records.verify(session)
        assert outcome.ok and outcome.records == 3  # two kept plus the prune record


def test_filters_and_keyset_pages(app):
    db = extensions(app).db
    with db.session(write=True) as session:
        rows = [append_record(session, i) for i in range(7)]
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

    db = extensions(app).db
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


def _whole_body_hash(prev_hash: str, row) -> str:
    """The chain's definition, written out in one piece: sha256 of the previous hash and the
    record's content as JSON with sorted keys, ``seq`` included."""
    body = {
        "id": row.id,
        "seq": row.seq,
        "kind": row.kind,
        "snapshotId": row.snapshot_id,
        "createdAt": records.iso(row.created_at),
        "engineVersion": row.engine_version,
        "keyId": row.key_id,
        "request": row.request,
        "result": row.result,
    }
    return hashlib.sha256(
        prev_hash.encode() + orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    ).hexdigest()


def test_appended_hash_is_the_whole_body_hash(app):
    """PostgreSQL finishes the hash in SQL from two precomputed parts; the result must be the
    same sha256 that verify recomputes from the whole record."""
    db = extensions(app).db
    with db.session(write=True) as session:
        rows = [append_record(session, i, key_id="k" if i % 2 else None) for i in range(12)]
    prev = records.GENESIS_HASH
    for n, row in enumerate(rows, start=1):
        assert row.seq == n
        assert row.prev_hash == prev
        assert row.record_hash == _whole_body_hash(prev, row)
        prev = row.record_hash
    with db.session() as session:
        stored = session.scalars(select(DecisionRow).order_by(DecisionRow.seq)).all()
        assert [r.record_hash for r in stored] == [r.record_hash for r in rows]
        subjects = session.execute(
            select(DecisionSubject.subject, DecisionSubject.value).where(
                DecisionSubject.decision_seq == rows[4].seq
            )
        ).all()
        assert sorted(subjects) == [("node", "n1"), ("pod", "default/p4")]
        state = session.get(AuditState, 1)
        assert (state.head_seq, state.head_hash, state.head_prev_hash) == (
            rows[-1].seq,
            rows[-1].record_hash,
            rows[-1].prev_hash,
        )


def test_concurrent_writers_build_one_unbroken_chain(app):
    db = extensions(app).db
    errors: list[BaseException] = []

    def writer(offset: int) -> None:
        try:
            for i in range(15):
                with db.session(write=True) as session:
                    append_record(session, offset + i)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n * 100,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with db.session() as session:
        assert records.verify(session) == records.Verification(True, 90, None)
        seqs = session.scalars(select(DecisionRow.seq).order_by(DecisionRow.seq)).all()
    assert seqs == list(range(1, 91))


def test_records_cut_off_the_end_fail_verification(app):
    db = extensions(app).db
    with db.session(write=True) as session:
        rows = [append_record(session, i) for i in range(4)]
    with db.session(write=True) as session:
        session.execute(delete(DecisionSubject).where(DecisionSubject.decision_seq >= rows[2].seq))
        session.execute(delete(DecisionRow).where(DecisionRow.seq >= rows[2].seq))
    with db.session() as session:
        # Every remaining record is intact; only the head says two are missing.
        assert records.verify(session) == records.Verification(False, 2, None)


def test_a_lost_audit_row_is_rebuilt_from_the_newest_record(app):
    db = extensions(app).db
    with db.session(write=True) as session:
        rows = [append_record(session, i) for i in range(3)]
    with db.session(write=True) as session:
        session.execute(delete(AuditState))
    with db.session(write=True) as session:
        more = append_record(session, 3)
    assert (more.seq, more.prev_hash) == (rows[-1].seq + 1, rows[-1].record_hash)
    with db.session() as session:
        assert records.verify(session) == records.Verification(True, 4, None)


def test_prune_stops_at_the_first_record_not_older_than_the_cut(app):
    """createdAt is taken before the chain is locked, so neighbours can be a little out of
    sequence order; prune removes only the prefix in which every record is older."""
    db = extensions(app).db
    stamps = [
        datetime(2020, 1, 1, tzinfo=UTC),
        datetime(2020, 1, 3, tzinfo=UTC),  # written "late": newer than the cut
        datetime(2020, 1, 2, tzinfo=UTC),  # older than the cut, but after a newer record
        datetime(2020, 1, 4, tzinfo=UTC),
    ]
    with db.session(write=True) as session:
        rows = [append_record(session, i) for i in range(len(stamps))]
    # Give them those times, re-hashed as if written so (the chain stays valid).
    with db.session(write=True) as session:
        stored = session.scalars(select(DecisionRow).order_by(DecisionRow.seq)).all()
        for row, stamp in zip(stored, stamps, strict=True):
            row.created_at = stamp
        _rechain(session, stored)
    with db.session(write=True) as session:
        prune = records.prune(session, datetime(2020, 1, 2, 12, tzinfo=UTC), "test")
    assert prune.result == {"deleted": 1, "anchorSequence": rows[0].seq}
    with db.session() as session:
        kept = session.scalars(select(DecisionRow.seq).order_by(DecisionRow.seq)).all()
        assert kept == [r.seq for r in rows[1:]] + [prune.seq]
        assert records.verify(session) == records.Verification(True, 4, None)
