"""Migrations run up and down on SQLite and (when configured) PostgreSQL; the migration that
gave the chain its head."""

from __future__ import annotations

import subprocess
import sys
import uuid
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import orjson
import pytest
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from service.store import migrate, records
from service.store.db import Base, Database
from service.store.models import AuditState, SnapshotRow
from tests.conftest import TEST_DATABASE_URL
from tests.store.helpers import append_record

TABLES = {t.name for t in Base.metadata.sorted_tables}
ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def _scratch_postgres():
    """A throwaway database next to the test one, so up/down cannot disturb other tests."""
    url = make_url(TEST_DATABASE_URL)
    name = f"verdict_mig_{uuid.uuid4().hex[:8]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def scratch_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'm.db'}"
        return
    if not TEST_DATABASE_URL:
        pytest.skip("VERDICT_TEST_DATABASE_URL not set")
    with _scratch_postgres() as url:
        yield url


def test_upgrade_then_downgrade(scratch_url):
    db = Database(scratch_url)
    assert migrate.is_empty(db)
    migrate.upgrade(scratch_url)
    assert TABLES <= set(inspect(db.engine).get_table_names())
    assert migrate.is_current(db)
    migrate.downgrade(scratch_url, "base")
    assert set(inspect(db.engine).get_table_names()) & TABLES == set()
    migrate.upgrade(scratch_url)
    assert migrate.is_current(db)
    db.dispose()


@pytest.fixture
def scratch_postgres():
    if not TEST_DATABASE_URL:
        pytest.skip("hosts share a PostgreSQL; SQLite is one host's file")
    with _scratch_postgres() as url:
        yield url


def test_hosts_started_at_once_migrate_in_turn(scratch_postgres):
    """Several hosts starting on one empty PostgreSQL each run the migrations (as `verdict
    serve` does): they take turns under an advisory lock, and the later ones find the head
    already there. Without it, two at once collide creating the same type (UniqueViolation)
    and that host does not start."""
    script = "import sys; from service.store import migrate; migrate.upgrade(sys.argv[1])"
    hosts = [
        subprocess.Popen(
            [sys.executable, "-c", script, scratch_postgres], cwd=ROOT, stderr=subprocess.PIPE
        )
        for _ in range(4)
    ]
    answers = [(host.wait(timeout=120), host.stderr.read().decode()[-300:]) for host in hosts]
    assert answers == [(0, "")] * 4
    db = Database(scratch_postgres)
    assert migrate.is_current(db)
    db.dispose()


def test_models_match_migrations(scratch_url):
    """Autogenerate against a migrated database finds nothing to do."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    migrate.upgrade(scratch_url)
    db = Database(scratch_url)
    with db.engine.connect() as conn:
        diff = compare_metadata(
            MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata
        )
    db.dispose()
    assert diff == []


def test_migration_gives_an_existing_chain_its_head(scratch_url):
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
        nxt = append_record(session, 4)
    assert (nxt.seq, nxt.prev_hash) == (4, prev)
    with db.session() as session:
        assert records.verify(session) == records.Verification(True, 4, None)
    db.dispose()


def test_migration_stores_captured_at_in_utc(scratch_url):
    """SQLite kept a capturedAt's wall-clock digits without its offset; 0004 rewrites it from
    the instant the snapshot's content holds (PostgreSQL held the instant already)."""
    from service.engine.objects import Snapshot
    from service.store import snapshots

    migrate.upgrade(scratch_url, "0003")
    sent = datetime(2026, 11, 20, 10, 0, tzinfo=timezone(timedelta(hours=2)))
    content, digest = snapshots.encode(Snapshot(captured_at=sent))
    wall_clock = "2026-11-20 10:00:00.000000" if "sqlite" in scratch_url else sent
    db = Database(scratch_url)
    with db.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO snapshots (id, labels, created_at, captured_at, digest, counts, "
                "ignored, content) VALUES ('s1', '{}', :created, :captured, :digest, '{}', "
                "'{}', :content)"
            ),
            {
                "created": datetime(2026, 11, 20, 11, tzinfo=UTC),
                "captured": wall_clock,
                "digest": digest,
                "content": content,
            },
        )
    migrate.upgrade(scratch_url)
    with db.session() as session:
        row = session.get(SnapshotRow, "s1")
    db.dispose()
    assert row.captured_at == datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
