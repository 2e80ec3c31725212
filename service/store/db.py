"""Engine and sessions: SQLite tuned for several gunicorn workers, or PostgreSQL."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime

from sqlalchemy import DateTime, MetaData, create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def as_utc(moment: datetime) -> datetime:
    """The same instant in UTC; a naive time is taken as UTC (SQLite hands stored times back
    naive). An instant past the datetime range (9999-12-31T23:59:59-14:00) is held at the
    range's end, which every comparison with a stored time still answers rightly."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        edge = datetime.max if moment.year == datetime.max.year else datetime.min
        return edge.replace(tzinfo=UTC)


class UtcDateTime(TypeDecorator):
    """A point in time, stored and compared in UTC on every database.

    SQLite has no time type: SQLAlchemy writes a datetime's wall-clock digits and drops its
    offset, and compares the text. Every value bound here (stored, or compared with a column)
    is first turned into UTC, so that text order is time order; PostgreSQL's timestamptz
    compares instants anyway. Values come back aware, in UTC."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        moment = as_utc(value)
        return moment.replace(tzinfo=None) if dialect.name == "sqlite" else moment

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        return None if value is None else as_utc(value)


def normalize_url(url: str) -> str:
    """Accept plain postgresql:// URLs and use psycopg 3 for them."""
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def strict_json(value) -> str:
    """JSON columns hold standard JSON on every database: PostgreSQL's json type refuses
    NaN/Infinity, so SQLite must too (and the chain walk parses with orjson)."""
    return json.dumps(value, allow_nan=False)


def create_private_file(path: str) -> None:
    """Create the SQLite file owner-only (0600), in folders created owner-only (0700), before
    SQLite opens it: it holds every record and the API keys' hashes. SQLite gives its -wal and
    -shm files the database file's mode. An existing file is left as it is."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, mode=0o700, exist_ok=True)
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


BUSY_TIMEOUT_MS = 30_000  # how long a write waits for another worker's to end
_FIRST_RETRY, _LONGEST_RETRY = 0.0005, 0.005  # seconds between tries of the write lock


def _under_gevent() -> bool:
    """Whether this process runs on gevent's patched standard library (`verdict serve`)."""
    try:
        from gevent import monkey
    except ImportError:  # pragma: no cover - gevent is a dependency of `verdict serve`
        return False
    return monkey.is_module_patched("time")


def begin_immediate_cooperatively(dbapi_connection: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE`` where waiting for the write lock lets the worker's other requests
    run: tried without SQLite's busy handler, and retried after a patched ``time.sleep``
    every 0.5 to 5 ms until BUSY_TIMEOUT_MS.

    SQLite's own busy handler waits for a lock held by another worker by sleeping inside C
    (1, 2, 5, 10 ms and so on): under a gevent worker that sleep stops every greenlet of the
    process, so each write that met another worker's cost the worker's other requests the
    whole wait (bench/RESULTS.md, issue 24 part 3). Statements other than this BEGIN keep
    the busy handler (in WAL mode they hardly ever wait)."""
    dbapi_connection.execute("PRAGMA busy_timeout = 0")
    try:
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        delay = _FIRST_RETRY
        while True:
            try:
                dbapi_connection.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, _LONGEST_RETRY)
    finally:
        dbapi_connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def _commit_off_the_hub(dbapi_connection: sqlite3.Connection) -> None:
    """SQLite's COMMIT (its WAL write and fsync, 1 to 5 ms) in one of gevent's native
    threads under `verdict serve`, the request's greenlet waiting for it cooperatively: in
    the worker's own thread it stopped the worker's other requests for as long. The
    connection is used by one thread at a time still (the greenlet waits). Elsewhere the
    plain commit."""
    if not _under_gevent():
        dbapi_connection.commit()
        return
    import gevent

    gevent.get_hub().threadpool.apply(dbapi_connection.commit)


def make_engine(url: str) -> Engine:
    url = normalize_url(url)
    if url.startswith("sqlite"):
        path = make_url(url).database
        if path and path != ":memory:" and not path.startswith("file:"):
            create_private_file(path)
        engine = create_engine(
            url,
            connect_args={"timeout": 30, "check_same_thread": False},
            json_serializer=strict_json,
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record):
            # Let SQLAlchemy issue BEGIN itself (pysqlite's own handling defers it).
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA foreign_keys = ON")
            if ":memory:" not in url:
                cursor.execute("PRAGMA journal_mode = WAL")
                # FULL: WAL is synced at every commit, so a 201 survives power loss
                # (NORMAL only survives a crash of the process).
                cursor.execute("PRAGMA synchronous = FULL")
            cursor.close()

        engine.dialect.do_commit = _commit_off_the_hub

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn):
            # Writers take the write lock up front, so that reading the audit chain's head
            # and appending to it cannot interleave with another worker.
            immediate = conn.get_execution_options().get("immediate", False)
            if immediate and _under_gevent():
                begin_immediate_cooperatively(conn.connection.driver_connection)
                return
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=5,
        max_overflow=5,
        json_serializer=strict_json,
        # A 201 waits for its WAL flush whatever the server's default says.
        connect_args={"options": "-c synchronous_commit=on"},
    )


class Database:
    """The engine and a session factory; sessions are scoped to one unit of work."""

    def __init__(self, url: str) -> None:
        self.url = normalize_url(url)
        self.engine = make_engine(self.url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False, autoflush=False)

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    @contextmanager
    def session(self, *, write: bool = False) -> Iterator[Session]:
        """A session that commits on success and rolls back on any error."""
        session = self._sessions()
        try:
            if write and self.is_sqlite:
                session.connection(execution_options={"immediate": True})
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def dispose(self) -> None:
        self.engine.dispose()
