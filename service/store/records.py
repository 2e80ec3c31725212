"""Decision records: append-only, hash-chained, queryable, exportable, prunable.

Each record's hash covers its content and the hash of the record before it (by ``seq``).
Appends are serialized on audit_state row 1, which holds the chain's head (PostgreSQL: its row
lock, taken by the one statement that appends; SQLite: the write lock), so the chain is a
single line even with several gunicorn workers writing at once.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import NamedTuple

import orjson
from sqlalchemy import Text, cast, delete, exists, func, insert, select, text, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from service.store.db import as_utc, strict_json
from service.store.models import GENESIS_HASH, AuditState, DecisionRow, DecisionSubject

# The kind of the record a prune appends (beside the decision kinds, decisions.KINDS).
PRUNE_KIND = "prune"


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


class UnrepresentableRecord(ValueError):
    """A decision whose content JSON cannot carry: an integer past 64 bits, which only sums
    of quantities past int64 reach."""


def _hash_parts(row) -> tuple[bytes, bytes]:
    """The canonical JSON of a record's hashed content, split around the value of ``seq``.

    Keys are sorted, so the content is ``{<keys before "seq">,"seq":N,<keys after>}``: the two
    parts are fixed before the sequence number is known, which lets PostgreSQL finish the hash
    inside the append statement."""
    snapshot_id = row.snapshot_id
    before = {
        "createdAt": iso(row.created_at),
        "engineVersion": row.engine_version,
        "id": row.id,
        "keyId": row.key_id,
        "kind": row.kind,
        "request": row.request,
        "result": row.result,
    }
    try:
        head = orjson.dumps(before, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError as exc:
        raise UnrepresentableRecord(str(exc)) from None
    tail = orjson.dumps({"snapshotId": snapshot_id})
    return head[:-1] + b',"seq":', b"," + tail[1:]


def _chain_hash(prev_hash: str, seq: int, parts: tuple[bytes, bytes]) -> str:
    digest = hashlib.sha256(prev_hash.encode())
    digest.update(parts[0])
    digest.update(str(seq).encode())
    digest.update(parts[1])
    return digest.hexdigest()


def content_hash(prev_hash: str, row) -> str:
    """sha256(prev_hash + the record's content as canonical JSON, keys sorted, seq included)."""
    return _chain_hash(prev_hash, row.seq, _hash_parts(row))


def _ensure_audit_row(session: Session) -> None:
    """Row 1 of audit_state, created from the newest record when missing (a database emptied
    by hand): the genesis anchor and that record as the head."""
    newest = session.execute(
        select(DecisionRow.seq, DecisionRow.record_hash, DecisionRow.prev_hash)
        .order_by(DecisionRow.seq.desc())
        .limit(1)
    ).first()
    values = {
        "id": 1,
        "anchor_hash": GENESIS_HASH,
        "anchor_seq": 0,
        "note": "",
        "head_seq": newest.seq if newest else 0,
        "head_hash": newest.record_hash if newest else GENESIS_HASH,
        "head_prev_hash": newest.prev_hash if newest else GENESIS_HASH,
    }
    dialect = session.get_bind().dialect.name
    insert_for = postgresql_insert if dialect == "postgresql" else sqlite_insert
    session.execute(insert_for(AuditState.__table__).values(values).on_conflict_do_nothing())


def _lock_chain(session: Session):
    """Lock audit_state row 1 until commit (SQLite: the write transaction is the lock)."""
    query = select(AuditState.__table__).where(AuditState.id == 1).with_for_update()
    state = session.execute(query).first()
    if state is None:
        _ensure_audit_row(session)
        state = session.execute(query).first()
    return state


# One statement per append on PostgreSQL: lock and advance the head, finish the hash, write
# the record and its subjects. The row lock is held only for the server's own work and the
# commit; the head is read from the locked row (READ COMMITTED re-reads an updated row), so
# it is never stale.
_APPEND_POSTGRESQL = text(
    """
WITH head AS (
    UPDATE audit_state
       SET head_seq = head_seq + 1,
           head_prev_hash = head_hash,
           head_hash = encode(sha256(convert_to(head_hash, 'UTF8') || :prefix
                              || convert_to(CAST(head_seq + 1 AS text), 'UTF8') || :suffix), 'hex')
     WHERE id = 1
 RETURNING head_seq, head_prev_hash, head_hash
), record AS (
    INSERT INTO decisions (seq, id, kind, snapshot_id, created_at, engine_version, key_id,
                           request, result, prev_hash, record_hash)
    SELECT head_seq, :id, :kind, :snapshot_id, :created_at, :engine_version, :key_id,
           CAST(:request AS json), CAST(:result AS json), head_prev_hash, head_hash
      FROM head
 RETURNING seq
), subjects AS (
    INSERT INTO decision_subjects (decision_seq, subject, value)
    SELECT record.seq, s.subject, s.value
      FROM record, unnest(CAST(:subjects AS text[]), CAST(:subject_values AS text[]))
           AS s(subject, value)
)
SELECT head_seq, head_prev_hash, head_hash FROM head
"""
)


def _append_postgresql(session: Session, row: StoredRecord, subjects: list[tuple[str, str]]):
    params = {
        "prefix": row.parts[0],
        "suffix": row.parts[1],
        "id": row.id,
        "kind": row.kind,
        "snapshot_id": row.snapshot_id,
        "created_at": row.created_at,
        "engine_version": row.engine_version,
        "key_id": row.key_id,
        "request": strict_json(row.request),
        "result": strict_json(row.result),
        "subjects": [s for s, _ in subjects],
        "subject_values": [v for _, v in subjects],
    }
    head = session.execute(_APPEND_POSTGRESQL, params).first()
    if head is None:  # no row 1 yet
        _ensure_audit_row(session)
        head = session.execute(_APPEND_POSTGRESQL, params).first()
    row.seq, row.prev_hash, row.record_hash = head


def _append_serialized(session: Session, row: StoredRecord, subjects: list[tuple[str, str]]):
    """SQLite: the caller's write transaction (BEGIN IMMEDIATE) already serializes appends."""
    state = _lock_chain(session)
    row.seq, row.prev_hash = state.head_seq + 1, state.head_hash
    row.record_hash = _chain_hash(row.prev_hash, row.seq, row.parts)
    values = {name: getattr(row, name) for name in _RECORD_COLUMNS}
    session.execute(insert(DecisionRow.__table__), [values])
    if subjects:
        session.execute(
            insert(DecisionSubject.__table__),
            [{"decision_seq": row.seq, "subject": s, "value": v} for s, v in subjects],
        )
    session.execute(
        update(AuditState.__table__)
        .where(AuditState.id == 1)
        .values(head_seq=row.seq, head_hash=row.record_hash, head_prev_hash=row.prev_hash)
    )


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
    if session.new:  # pending ORM objects (an inline snapshot) must exist before the record
        session.flush()
    row = StoredRecord(
        seq=0,
        id=str(uuid.uuid4()),
        kind=kind,
        snapshot_id=snapshot_id,
        created_at=datetime.now(UTC),
        engine_version=engine_version,
        key_id=key_id,
        request=request,
        result=result,
        prev_hash="",
        record_hash="",
    )
    # Everything but the sequence number is hashed before the chain is locked.
    row.parts = _hash_parts(row)
    subjects = [("node", n) for n in dict.fromkeys(node_names)]
    subjects += [("pod", p) for p in dict.fromkeys(pods)]
    if session.get_bind().dialect.name == "postgresql":
        _append_postgresql(session, row, subjects)
    else:
        _append_serialized(session, row, subjects)
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


def _filtered(filters: Filters, *columns):
    query = select(*columns) if columns else select(DecisionRow)
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


class ReplayRow(NamedTuple):
    """What a replay reads of a record, as plain values: the request parsed, the result as
    the stored JSON text (``strict_json``'s), which a replay giving the same result matches
    without parsing it."""

    seq: int
    id: str
    kind: str
    snapshot_id: str | None
    request: dict
    result_text: str


def _of_kinds(filters: Filters, kinds: Collection[str], *columns):
    query = _filtered(filters, *columns)
    return query if filters.kind else query.where(DecisionRow.kind.in_(kinds))


def replay_page(
    session: Session, filters: Filters, kinds: Collection[str], limit: int, before_seq: int | None
) -> list[ReplayRow]:
    """A page of records to replay, newest first (keyset on ``seq``), of ``kinds`` unless the
    filters name one; read as plain tuples with orjson, not ORM objects (impact reads
    thousands a second)."""
    table = DecisionRow.__table__
    query = _of_kinds(
        filters,
        kinds,
        table.c.seq,
        table.c.id,
        table.c.kind,
        table.c.snapshot_id,
        cast(table.c.request, Text),
        cast(table.c.result, Text),
    )
    if before_seq is not None:
        query = query.where(DecisionRow.seq < before_seq)
    rows = session.execute(query.order_by(DecisionRow.seq.desc()).limit(limit)).all()
    loads = orjson.loads
    return [ReplayRow(s, i, k, snap, loads(req), res) for s, i, k, snap, req, res in rows]


def count(session: Session, filters: Filters, kinds: Collection[str]) -> int:
    """How many records match ``filters`` among ``kinds`` (a progress bar's total)."""
    query = _of_kinds(filters, kinds, func.count()).select_from(DecisionRow)
    return session.scalar(query) or 0


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
    # The hashed content around its seq (see _hash_parts), while the record is appended.
    parts: tuple[bytes, bytes] | None = field(default=None, repr=False, compare=False)


_RECORD_COLUMNS = tuple(c.name for c in DecisionRow.__table__.columns)


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
    session: Session, since: datetime | None = None, batch: int = 5000, after_seq: int = -1
) -> Iterator[StoredRecord]:
    """Every record in chain order (oldest first), after ``after_seq``, fetched in keyset
    batches as plain tuples (no ORM row objects: the walk reads a million records)."""
    after = after_seq
    columns = _chain_columns()
    loads = orjson.loads
    connection = session.connection()
    while True:
        query = select(*columns).where(DecisionRow.seq > after)
        if since is not None:
            query = query.where(DecisionRow.created_at >= since)
        rows = connection.execute(query.order_by(DecisionRow.seq).limit(batch)).all()
        if not rows:
            return
        for seq, id_, kind, snapshot_id, created, engine, key, request, result, prev, h in rows:
            yield StoredRecord(
                seq,
                id_,
                kind,
                snapshot_id,
                created,
                engine,
                key,
                loads(request),
                loads(result),
                prev,
                h,
            )
        after = rows[-1][0]


@dataclass
class Verification:
    ok: bool
    records: int
    first_bad_id: str | None
    # Every record walked checks (links, hashes, expected heads); only the recorded head may
    # disagree, which means records were cut off the end.
    intact: bool = True
    # The sequence number of the last record that checks (the walk's start when none does).
    checked_through: int = field(default=0, compare=False)


def verify(
    session: Session,
    expected: Mapping[int, tuple[str, str]] | None = None,
    start_after: int | None = None,
) -> Verification:
    """Walk the chain from the anchor; then the newest record must be the recorded head, or
    records were cut off the end (reported with no ``first_bad_id``: none is left to name).

    ``expected`` maps a sequence number to the (id, hash) the record there must have: the
    heads of signed checkpoints the chain must extend. ``start_after`` walks only the records
    after that sequence number instead, the first of them trusted for its link back."""
    expected = expected or {}
    state = session.get(AuditState, 1)
    if start_after is None:
        expected_prev = state.anchor_hash if state else GENESIS_HASH
        expected_seq = (state.anchor_seq if state else 0) + 1
    else:
        expected_prev, expected_seq = None, start_after + 1
    count = 0
    for row in iterate(session, after_seq=-1 if start_after is None else start_after):
        count += 1
        if (
            row.seq != expected_seq
            or row.prev_hash != (row.prev_hash if expected_prev is None else expected_prev)
            or content_hash(row.prev_hash, row) != row.record_hash
        ):
            return Verification(
                False, count, row.id, intact=False, checked_through=expected_seq - 1
            )
        head = expected.get(row.seq)
        if head is not None and head != (row.id, row.record_hash):
            return Verification(False, count, row.id, intact=False, checked_through=row.seq - 1)
        expected_prev, expected_seq = row.record_hash, row.seq + 1
    checked = expected_seq - 1
    if state is not None and (state.head_seq, state.head_hash) != (checked, expected_prev):
        return Verification(False, count, None, checked_through=checked)
    return Verification(True, count, None, checked_through=checked)


def prune(session: Session, before: datetime, engine_version: str) -> DecisionRow:
    """Remove the records older than ``before`` that come before every newer one (only a
    prefix of the chain can go, or it would have a hole); the chain is re-anchored and the
    prune recorded.

    A record's createdAt is taken before the chain is locked, so on PostgreSQL two records
    written at the same moment can carry times a few milliseconds out of sequence order; the
    prefix stops at the first record not older than ``before``."""
    _lock_chain(session)
    first_kept = session.scalar(
        select(func.min(DecisionRow.seq)).where(DecisionRow.created_at >= before)
    )
    older = select(DecisionRow.seq, DecisionRow.record_hash).where(DecisionRow.created_at < before)
    if first_kept is not None:
        older = older.where(DecisionRow.seq < first_kept)
    last = session.execute(older.order_by(DecisionRow.seq.desc()).limit(1)).first()
    deleted = 0
    if last is not None:
        deleted = session.execute(
            delete(DecisionSubject).where(DecisionSubject.decision_seq <= last.seq)
        ).rowcount
        deleted = session.execute(delete(DecisionRow).where(DecisionRow.seq <= last.seq)).rowcount
        session.execute(
            update(AuditState.__table__)
            .where(AuditState.id == 1)
            .values(anchor_hash=last.record_hash, anchor_seq=last.seq)
        )
    return append(
        session,
        kind=PRUNE_KIND,
        snapshot_id=None,
        key_id=None,
        request={"before": iso(before)},
        result={"deleted": deleted, "anchorSequence": last.seq if last else None},
        engine_version=engine_version,
    )
