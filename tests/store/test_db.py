"""A stored record survives power loss on both databases (issue 14): every session commits
with the WAL flushed, whatever the server's defaults."""

from __future__ import annotations

from sqlalchemy import text

from service.extensions import extensions
from service.store.db import Database


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
