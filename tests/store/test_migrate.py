"""Migrations run up and down on SQLite and (when configured) PostgreSQL."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from service.store import migrate
from service.store.db import Base, Database
from tests.conftest import TEST_DATABASE_URL

TABLES = {t.name for t in Base.metadata.sorted_tables}


def _scratch_postgres():
    """A throwaway database next to the test one, so up/down cannot disturb other tests."""
    url = make_url(TEST_DATABASE_URL)
    name = f"verdict_mig_{uuid.uuid4().hex[:8]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    return url.set(database=name).render_as_string(hide_password=False), admin, name


@pytest.fixture(params=["sqlite", "postgresql"])
def scratch_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'm.db'}"
        return
    if not TEST_DATABASE_URL:
        pytest.skip("VERDICT_TEST_DATABASE_URL not set")
    url, admin, name = _scratch_postgres()
    yield url
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


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
