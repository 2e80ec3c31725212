"""Typed SQLAlchemy 2 models: API keys, snapshots, decision records and their subjects."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from service.store.db import Base, UtcDateTime


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    role: Mapped[str] = mapped_column(String(16))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 hex of the secret
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class SnapshotRow(Base):
    __tablename__ = "snapshots"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str | None] = mapped_column(String(500), nullable=True)
    cluster: Mapped[str | None] = mapped_column(String(200), nullable=True, index=True)
    labels: Mapped[dict] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), index=True)
    captured_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    digest: Mapped[str] = mapped_column(String(80), index=True)
    counts: Mapped[dict] = mapped_column(JSON)
    ignored: Mapped[dict] = mapped_column(JSON, default=dict)
    # zstd-compressed msgpack of the normalized engine Snapshot (zlib in rows written before).
    content: Mapped[bytes] = mapped_column(LargeBinary)
    # The scheduler's view of the content (store/snapshots.py encode_view); None in rows
    # stored before migration 0003 until the warming thread writes it.
    scheduler_view: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    key_id: Mapped[str | None] = mapped_column(String(36), nullable=True)


class DecisionRow(Base):
    """One decision, append-only, linked into a hash chain by ``seq``."""

    __tablename__ = "decisions"

    seq: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=False
    )
    id: Mapped[str] = mapped_column(String(36), unique=True)
    kind: Mapped[str] = mapped_column(String(40))
    snapshot_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("snapshots.id", ondelete="RESTRICT"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    engine_version: Mapped[str] = mapped_column(String(64))
    key_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    request: Mapped[dict] = mapped_column(JSON)
    result: Mapped[dict] = mapped_column(JSON)
    prev_hash: Mapped[str] = mapped_column(String(64))
    record_hash: Mapped[str] = mapped_column(String(64))

    __table_args__ = (
        Index("ix_decisions_kind_seq", "kind", "seq"),
        Index("ix_decisions_snapshot_seq", "snapshot_id", "seq"),
        Index("ix_decisions_key_seq", "key_id", "seq"),
        Index("ix_decisions_created_seq", "created_at", "seq"),
    )


class DecisionSubject(Base):
    """What a decision is about (a node or a pod), for the history filters."""

    __tablename__ = "decision_subjects"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    decision_seq: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"),
        ForeignKey("decisions.seq", ondelete="CASCADE"),
    )
    subject: Mapped[str] = mapped_column(String(8))  # "node" | "pod"
    value: Mapped[str] = mapped_column(String(400))

    __table_args__ = (Index("ix_decision_subjects_lookup", "subject", "value", "decision_seq"),)


GENESIS_HASH = "0" * 64


class AuditState(Base):
    """The chain's two ends, in row 1: the anchor (the hash the oldest remaining record must
    point at) and the head (the newest record's sequence, hash and previous hash).

    Every append updates the head in the same statement that writes the record, so this row
    is the chain's lock, and ``verify`` can tell when records were cut off the end."""

    __tablename__ = "audit_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    anchor_hash: Mapped[str] = mapped_column(String(64))
    anchor_seq: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"))
    note: Mapped[str] = mapped_column(Text, default="")
    head_seq: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), server_default="0"
    )
    head_hash: Mapped[str] = mapped_column(String(64), server_default=GENESIS_HASH)
    head_prev_hash: Mapped[str] = mapped_column(String(64), server_default=GENESIS_HASH)
