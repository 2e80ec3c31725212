"""The chain's head in audit_state: one-statement appends, concurrent writers, tail truncation,
and the migration that introduced it."""

from __future__ import annotations

import hashlib
import threading
from datetime import UTC, datetime

import orjson
from sqlalchemy import delete, select, text

from service.store import migrate, records
from service.store.db import Database
from service.store.models import AuditState, DecisionRow, DecisionSubject
from tests.store.test_migrate import scratch_url  # noqa: F401  (fixture)


def _append(session, i: int, **kw):
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
    db = app.extensions["verdict.db"]
    with db.session(write=True) as session:
        rows = [_append(session, i, key_id="k" if i % 2 else None) for i in range(12)]
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
    db = app.extensions["verdict.db"]
    errors: list[BaseException] = []

    def writer(offset: int) -> None:
        try:
            for i in range(15):
                with db.session(write=True) as session:
                    _append(session, offset + i)
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
    db = app.extensions["verdict.db"]
    with db.session(write=True) as session:
        rows = [_append(session, i) for i in range(4)]
    with db.session(write=True) as session:
        session.execute(delete(DecisionSubject).where(DecisionSubject.decision_seq >= rows[2].seq))
        session.execute(delete(DecisionRow).where(DecisionRow.seq >= rows[2].seq))
    with db.session() as session:
        # Every remaining record is intact; only the head says two are missing.
        assert records.verify(session) == records.Verification(False, 2, None)


def test_a_lost_audit_row_is_rebuilt_from_the_newest_record(app):
    db = app.extensions["verdict.db"]
    with db.session(write=True) as session:
        rows = [_append(session, i) for i in range(3)]
    with db.session(write=True) as session:
        session.execute(delete(AuditState))
    with db.session(write=True) as session:
        more = _append(session, 3)
    assert (more.seq, more.prev_hash) == (rows[-1].seq + 1, rows[-1].record_hash)
    with db.session() as session:
        assert records.verify(session) == records.Verification(True, 4, None)


def test_migration_gives_an_existing_chain_its_head(scratch_url):  # noqa: F811
    """A database written before 0002 (records, no head) upgrades to one whose chain verifies
    and keeps growing from its newest record."""
    migrate.upgrade(scratch_url, "0001")
    db = Database(scratch_url)
    prev = records.GENESIS_HASH
    with db.engine.begin() as conn:
        for seq in (1, 2, 3):
            row = records.StoredRecord(
                seq=seq,
                id=f"00000000-0000-4000-8000-00000000000{seq}",
                kind="admission",
                snapshot_id=None,
                created_at=datetime(2026, 1, seq, tzinfo=UTC),
                engine_version="old",
                key_id=None,
                request={"seq": seq},
                result={"admitted": True},
                prev_hash=prev,
                record_hash="",
            )
            row.record_hash = records.content_hash(prev, row)
            conn.execute(
                text(
                    "INSERT INTO decisions (seq, id, kind, snapshot_id, created_at, "
                    "engine_version, key_id, request, result, prev_hash, record_hash) VALUES "
                    "(:seq, :id, 'admission', NULL, :created_at, 'old', NULL, :request, "
                    ":result, :prev_hash, :record_hash)"
                ),
                {
                    "seq": seq,
                    "id": row.id,
                    "created_at": row.created_at,
                    "request": orjson.dumps(row.request).decode(),
                    "result": orjson.dumps(row.result).decode(),
                    "prev_hash": prev,
                    "record_hash": row.record_hash,
                },
            )
            prev = row.record_hash
    migrate.upgrade(scratch_url)
    with db.session() as session:
        state = session.get(AuditState, 1)
        assert (state.head_seq, state.head_hash) == (3, prev)
        assert records.verify(session) == records.Verification(True, 3, None)
    with db.session(write=True) as session:
        nxt = _append(session, 4)
    assert (nxt.seq, nxt.prev_hash) == (4, prev)
    with db.session() as session:
        assert records.verify(session) == records.Verification(True, 4, None)
    db.dispose()


def test_prune_stops_at_the_first_record_not_older_than_the_cut(app):
    """createdAt is taken before the chain is locked, so neighbours can be a little out of
    sequence order; prune removes only the prefix in which every record is older."""
    db = app.extensions["verdict.db"]
    stamps = [
        datetime(2020, 1, 1, tzinfo=UTC),
        datetime(2020, 1, 3, tzinfo=UTC),  # written "late": newer than the cut
        datetime(2020, 1, 2, tzinfo=UTC),  # older than the cut, but after a newer record
        datetime(2020, 1, 4, tzinfo=UTC),
    ]
    with db.session(write=True) as session:
        rows = [_append(session, i) for i in range(len(stamps))]
    # Give them those times, re-hashed as if written so (the chain stays valid).
    with db.session(write=True) as session:
        prev = records.GENESIS_HASH
        stored = session.scalars(select(DecisionRow).order_by(DecisionRow.seq)).all()
        for row, stamp in zip(stored, stamps, strict=True):
            row.created_at = stamp
            row.prev_hash = prev
            row.record_hash = records.content_hash(prev, row)
            prev = row.record_hash
        state = session.get(AuditState, 1)
        state.head_seq, state.head_hash, state.head_prev_hash = row.seq, prev, row.prev_hash
    with db.session(write=True) as session:
        prune = records.prune(session, datetime(2020, 1, 2, 12, tzinfo=UTC), "test")
    assert prune.result == {"deleted": 1, "anchorSequence": rows[0].seq}
    with db.session() as session:
        kept = session.scalars(select(DecisionRow.seq).order_by(DecisionRow.seq)).all()
        assert kept == [r.seq for r in rows[1:]] + [prune.seq]
        assert records.verify(session) == records.Verification(True, 4, None)
