"""Alembic environment: the URL comes from the Config (set by service.store.migrate)."""

from alembic import context
from sqlalchemy import text

from service.store import models  # noqa: F401  (registers the tables)
from service.store.db import Base, make_engine

config = context.config
target_metadata = Base.metadata

# PostgreSQL advisory lock held while migrating: hosts started at once on one database take
# turns, and each finds the version the one before left (Alembic reads it after the lock).
MIGRATION_LOCK = 0x5645524449435400  # "VERDICT\0"


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        compare_type=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(config.get_main_option("sqlalchemy.url"))
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


def _run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        compare_type=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
