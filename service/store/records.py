"""Decision records: append-only, hash-chained, queryable, exportable, prunable.

Each record's hash covers its content and the hash of the record before it (by ``seq``).
Appends are serialized (PostgreSQL advisory lock, SQLite's write lock) so the chain is a
single line even with several gunicorn workers writing at once.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import orjson
from sqlalchemy import Text, cast, delete, exists, insert, select, text
from sqlalchemy.orm import Session

from service.store.models import AuditState, DecisionRow, DecisionSubject

GENESIS_HASH = "0" * 64
CHAIN_LOCK_KEY = 7_262_001  # pg_advisory_xact_lock key owned by Verdict


def as_utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return as_utc(moment).isoformat(timespec="microseconds").replace("+00:00", "Z")


def to_json(row: DecisionRow) -> dict:
    return {
        "id": row.id,
        "kind": row.kind,
        "snapshotId": row.snapshot_id,
        "createdAt": iso(row.created_at),
        "engineVersion": row.engine_version,
        "keyId": row.key_id,
        "request": row.request,
        "result": row.result,
        "sequence": row.seq,
        "prevHash": row.prev_hash,
        "hash": row.record_hash,
    }


def content_hash(prev_hash: str, row: DecisionRow) -> str:
    body = {
        "id": row.id,
        "seq": row.seq,
        "kind": row.kind,
        "snapshotId": row.snapshot_id,
        "createdAt": iso(row.created_at),
        "engineVersion": row.engine_version,
        "keyId": row.key_id,
        "request": row.request,
        "result": row.result,
    }
    digest = hashlib.sha256(prev_hash.encode())
    digest.update(orjson.dumps(body, option=orjson.OPT_SORT_KEYS))
    return digest.hexdigest()


def _lock_chain(session: Session) -> None:
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": CHAIN_LOCK_KEY})


def _head(session: Session) -> tuple[int, str]:
    row = session.execute(
        select(DecisionRow.seq, DecisionRow.record_hash).order_by(DecisionRow.seq.desc()).limit(1)
    ).first()
    if row is not None:
        return row.seq, row.record_hash
    anchor = session.get(AuditState, 1)
    return (anchor.anchor_seq, anchor.anchor_hash) if anchor else (0, GENESIS_HASH)


def append(
    session: Session,
    *,
    kind: str,
    snapshot_id: str | None,
    key_id: str | None,
    request: dict,
    result: dict,
    engine_version: str,
    node_names: list[str] = (),
    pods: list[str] = (),
) -> StoredRecord:
    """Add one record at the head of the chain, in the caller's transaction."""
    _lock_chain(session)
    if session.new:  # pending ORM objects (an inline snapshot) must exist before the record
        session.flush()
    seq, prev_hash = _head(session)
    row = StoredRecord(
        seq=seq + 1,
        id=str(uuid.uuid4()),
        kind=kind,
        snapshot_id=snapshot_id,
        created_at=datetime.now(UTC),
        engine_version=engine_version,
        key_id=key_id,
        request=request,
        result=result,
        prev_hash=prev_hash,
        record_hash="",
    )
    row.record_hash = content_hash(prev_hash, row)
    # Core inserts: the hot path of every decision, without the ORM unit of work.
    values = {name: getattr(row, name) for name in StoredRecord.__slots__}
    session.execute(insert(DecisionRow.__table__), [values])
    subjects = [
        {"decision_seq": row.seq, "subject": "node", "value": n} for n in dict.fromkeys(node_names)
    ]
    subjects += [
        {"decision_seq": row.seq, "subject": "pod", "value": p} for p in dict.fromkeys(pods)
    ]
    if subjects:
        session.execute(insert(DecisionSubject.__table__), subjects)
    return row


@dataclass
class Filters:
    kind: str | None = None
    snapshot_id: str | None = None
    node_name: str | None = None
    pod: str | None = None
    key_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def _filtered(filters: Filters):
    query = select(DecisionRow)
    if filters.kind:
        query = query.where(DecisionRow.kind == filters.kind)
    if filters.snapshot_id:
        query = query.where(DecisionRow.snapshot_id == filters.snapshot_id)
    if filters.key_id:
        query = query.where(DecisionRow.key_id == filters.key_id)
    if filters.since:
        query = query.where(DecisionRow.created_at >= filters.since)
    if filters.until:
        query = query.where(DecisionRow.created_at < filters.until)
    for subject, value in (("node", filters.node_name), ("pod", filters.pod)):
        if value:
            query = query.where(
                exists().where(
                    DecisionSubject.decision_seq == DecisionRow.seq,
                    DecisionSubject.subject == subject,
                    DecisionSubject.value == value,
                )
            )
    return query


def page(
    session: Session, filters: Filters, limit: int, before_seq: int | None
) -> list[DecisionRow]:
    """Newest first; keyset on ``seq`` so pages stay correct while records are added."""
    query = _filtered(filters)
    if before_seq is not None:
        query = query.where(DecisionRow.seq < before_seq)
    return list(session.scalars(query.order_by(DecisionRow.seq.desc()).limit(limit)))


def get(session: Session, decision_id: str) -> DecisionRow | None:
    return session.scalar(select(DecisionRow).where(DecisionRow.id == decision_id))


@dataclass(slots=True)
class StoredRecord:
    """A record read for walking the chain: plain attributes, no ORM identity tracking."""

    seq: int
    id: str
    kind: str
    snapshot_id: str | None
    created_at: datetime
    engine_version: str
    key_id: str | None
    request: dict
    result: dict
    prev_hash: str
    record_hash: str


def _chain_columns():
    table = DecisionRow.__table__
    return [
        table.c.seq,
        table.c.id,
        table.c.kind,
        table.c.snapshot_id,
        table.c.created_at,
        table.c.engine_version,
        table.c.key_id,
        # As text, parsed by orjson: several times faster than the driver's json module.
        cast(table.c.request, Text).label("request"),
        cast(table.c.result, Text).label("result"),
        table.c.prev_hash,
        table.c.record_hash,
    ]


def iterate(
    session: Session, since: datetime | None = None, batch: int = 5000
) -> Iterator[StoredRecord]:
    """Every record in chain order (oldest first), fetched in keyset batches."""
    after = -1
    columns = _chain_columns()
    loads = orjson.loads
    while True:
        query = select(*columns).where(DecisionRow.seq > after)
        if since is not None:
            query = query.where(DecisionRow.created_at >= since)
        rows = session.execute(query.order_by(DecisionRow.seq).limit(batch)).all()
        if not rows:
            return
        for r in rows:
            yield StoredRecord(
                r.seq,
                r.id,
                r.kind,
                r.snapshot_id,
                r.created_at,
                r.engine_version,
                r.key_id,
                loads(r.request),
                loads(r.result),
                r.prev_hash,
                r.record_hash,
            )
        after = rows[-1].seq


@dataclass
class Verification:
    ok: bool
    records: int
    first_bad_id: str | None


def verify(session: Session) -> Verification:
    anchor = session.get(AuditState, 1)
    expected_prev = anchor.anchor_hash if anchor else GENESIS_HASH
    expected_seq = (anchor.anchor_seq if anchor else 0) + 1
    count = 0
    for row in iterate(session):
        count += 1
        if (
            row.seq != expected_seq
            or row.prev_hash != expected_prev
            or content_hash(row.prev_hash, row) != row.record_hash
        ):
            return Verification(False, count, row.id)
        expected_prev, expected_seq = row.record_hash, row.seq + 1
    return Verification(True, count, None)


def prune(session: Session, before: datetime, engine_version: str) -> DecisionRow:
    """Remove records older than ``before``; the chain is re-anchored and the prune recorded."""
    _lock_chain(session)
    last = session.execute(
        select(DecisionRow.seq, DecisionRow.record_hash)
        .where(DecisionRow.created_at < before)
        .order_by(DecisionRow.seq.desc())
        .limit(1)
    ).first()
    deleted = 0
    if last is not None:
        # Only a prefix of the chain can go, or the chain would have a hole in the middle.
        deleted = session.execute(
            delete(DecisionSubject).where(DecisionSubject.decision_seq <= last.seq)
        ).rowcount
        deleted = session.execute(delete(DecisionRow).where(DecisionRow.seq <= last.seq)).rowcount
        anchor = session.get(AuditState, 1)
        if anchor is None:
            session.add(AuditState(id=1, anchor_hash=last.record_hash, anchor_seq=last.seq))
        else:
            anchor.anchor_hash, anchor.anchor_seq = last.record_hash, last.seq
        session.flush()
    return append(
        session,
        kind="prune",
        snapshot_id=None,
        key_id=None,
        request={"before": iso(before)},
        result={"deleted": deleted, "anchorSequence": last.seq if last else None},
        engine_version=engine_version,
    )
