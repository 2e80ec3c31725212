"""A stored record survives power loss on both databases (issue 14): every session commits
with the WAL flushed, whatever the server's defaults. Times are stored and compared as
instants in UTC on both (issue 24)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import text, update

from service.extensions import extensions
from service.store import records
from service.store.db import Database
from service.store.models import DecisionRow
from tests.store.helpers import OFFSET_TIMES, append_at_hours


def test_commits_wait_for_the_disk(app):
    db = extensions(app).db
    if db.is_sqlite:
        with db.session() as session:
            assert session.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            assert session.execute(text("PRAGMA synchronous")).scalar() == 2  # FULL
        return
    # A server (or database) configured with synchronous_commit off is overridden.
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        name = conn.execute(text("SELECT current_database()")).scalar()
        conn.execute(text(f'ALTER DATABASE "{name}" SET synchronous_commit = off'))
    try:
        fresh = Database(db.url)
        with fresh.session() as session:
            assert session.execute(text("SHOW synchronous_commit")).scalar() == "on"
        fresh.dispose()
    finally:
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text(f'ALTER DATABASE "{name}" RESET synchronous_commit'))


@pytest.mark.parametrize(("moment", "before"), OFFSET_TIMES)
def test_times_are_compared_as_instants(app, moment, before):
    """A time with any offset filters and prunes by the instant it names (issue 24): SQLite
    compares stored times as text, so both sides must be UTC."""
    db = extensions(app).db
    ids = append_at_hours(db)
    cut = datetime.fromisoformat(moment)
    with db.session() as session:
        since = records.page(session, records.Filters(since=cut), 10, None)
        until = records.page(session, records.Filters(until=cut), 10, None)
        exported = [r.id for r in records.iterate(session, cut)]
    assert sorted(r.id for r in until) == sorted(ids[:before])
    assert sorted(r.id for r in since) == sorted(ids[before:]) == sorted(exported)
    with db.session(write=True) as session:
        pruned = records.prune(session, cut, "test")
    assert pruned.result["deleted"] == before


def test_times_are_stored_in_utc(app):
    db = extensions(app).db
    ids = append_at_hours(db)
    plus_two = timezone(timedelta(hours=2))
    with db.session(write=True) as session:
        session.execute(
            update(DecisionRow)
            .where(DecisionRow.id == ids[0])
            .values(created_at=datetime(2026, 11, 27, 10, 0, tzinfo=plus_two))
        )
    with db.session() as session:
        row = records.get(session, ids[0])
        raw = session.execute(
            text("SELECT CAST(created_at AS TEXT) FROM decisions WHERE id = :id"), {"id": ids[0]}
        ).scalar()
    assert row.created_at == datetime(2026, 11, 27, 8, 0, tzinfo=UTC)
    assert row.created_at.utcoffset() == timedelta(0)
    if db.is_sqlite:
        assert raw == "2026-11-27 08:00:00.000000"


def test_an_instant_past_the_datetime_range_compares_as_its_end(app):
    db = extensions(app).db
    ids = append_at_hours(db)
    late = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-14)))
    early = datetime(1, 1, 1, 0, 0, tzinfo=timezone(timedelta(hours=14)))
    with db.session() as session:
        assert len(records.page(session, records.Filters(until=late), 10, None)) == len(ids)
        assert records.page(session, records.Filters(since=late), 10, None) == []
        assert len(records.page(session, records.Filters(since=early), 10, None)) == len(ids)


def test_the_sqlite_file_is_owner_only(tmp_path):
    """verdict.db holds every record and the API keys' hashes: 0600 in a 0700 folder, and
    SQLite's WAL and shared-memory files follow the database file's mode."""
    from service.config import Settings
    from service.store import migrate

    settings = Settings.from_env({"INSTANCE_PATH": str(tmp_path / "instance")})
    migrate.upgrade(settings.DATABASE_URL)
    db = Database(settings.DATABASE_URL)
    with db.session(write=True) as session:
        session.execute(text("CREATE TABLE probe (x INTEGER)"))
    files = sorted((tmp_path / "instance").glob("verdict.db*"))
    modes = {path.name: path.stat().st_mode & 0o777 for path in files}
    db.dispose()
    assert {"verdict.db", "verdict.db-wal"} <= set(modes)
    assert set(modes.values()) == {0o600}, modes
    assert (tmp_path / "instance").stat().st_mode & 0o777 == 0o700


# Run in a child: gevent's patching must not touch the test process.
_WAIT_FOR_LOCK = """
import sys, threading, time
from gevent import monkey
monkey.patch_all()
import gevent, sqlite3
from service.store.db import Database
path, held = sys.argv[1], float(sys.argv[2])
holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
holder.execute("BEGIN IMMEDIATE")
real_sleep = monkey.get_original("time", "sleep")
releaser = monkey.get_original("_thread", "start_new_thread")
releaser(lambda: (real_sleep(held), holder.execute("COMMIT")), ())
db = Database("sqlite:///" + path)
ticks = []
def ticker():
    while True:
        ticks.append(time.monotonic())
        gevent.sleep(0.002)
gevent.spawn(ticker)
gevent.sleep(0.01)
started = time.monotonic()
with db.session(write=True):
    waited = time.monotonic() - started
print(round(waited, 3), sum(started <= t <= started + waited for t in ticks))
"""


def test_a_gevent_worker_waiting_for_the_write_lock_keeps_serving(tmp_path):
    """Under gevent (`verdict serve`) a write that waits for another worker's lock lets the
    worker's other greenlets run: SQLite's busy handler slept inside C, stopping them all for
    the whole wait (here 0.3 s, in which a 2 ms ticker did not tick once)."""
    import subprocess
    import sys

    path = tmp_path / "lock.db"
    database = Database(f"sqlite:///{path}")
    with database.session(write=True):  # the file made, in WAL mode
        pass
    database.dispose()
    done = subprocess.run(
        [sys.executable, "-c", _WAIT_FOR_LOCK, str(path), "0.3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    waited, ticks = done.stdout.split()
    assert float(waited) >= 0.25  # the write did wait for the lock
    assert int(ticks) >= 20  # and the ticker kept running meanwhile


_SLOW_COMMIT = """
import time
from gevent import monkey
monkey.patch_all()
import gevent
from service.store.db import _commit_off_the_hub
blocking_sleep = monkey.get_original("time", "sleep")
class SlowDisk:
    def commit(self):
        blocking_sleep(0.3)  # an fsync that takes its time
ticks = []
def ticker():
    while True:
        ticks.append(time.monotonic())
        gevent.sleep(0.002)
gevent.spawn(ticker)
gevent.sleep(0.01)
started = time.monotonic()
_commit_off_the_hub(SlowDisk())
waited = time.monotonic() - started
print(round(waited, 3), sum(started <= t <= started + waited for t in ticks))
"""


def test_a_gevent_workers_commit_leaves_the_other_requests_running():
    """SQLite's COMMIT (its fsync) runs in one of gevent's native threads under `verdict
    serve`: in the worker's own thread it stopped every other greenlet while the disk
    synced."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _SLOW_COMMIT], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    waited, ticks = done.stdout.split()
    assert float(waited) >= 0.25 and int(ticks) >= 20
