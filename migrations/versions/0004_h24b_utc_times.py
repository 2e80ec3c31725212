"""SQLite: a snapshot's capturedAt is stored in UTC

Revision ID: 0004_h24b_utc_times
Revises: 0003
Create Date: 2026-11-27 00:30:00

SQLite has no time type: SQLAlchemy wrote a datetime's wall-clock digits and dropped its
offset, so a capturedAt sent as 10:00+02:00 was kept as 10:00 and read back as 10:00Z. Times
are now turned into UTC before they are written or compared (service/store/db.py UtcDateTime).
Every other stored time was taken from the clock in UTC already; capturedAt is rewritten from
the instant the snapshot's own content keeps (msgpack timestamps are UTC). PostgreSQL's
timestamptz kept instants all along: nothing to do there.
"""

import zlib
from datetime import UTC, datetime

import msgspec
import sqlalchemy as sa
import zstandard
from alembic import op

revision = "0004_h24b_utc_times"
down_revision = "0003"
branch_labels = None
depends_on = None

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class _Captured(msgspec.Struct):
    """The one field of a stored snapshot this migration reads."""

    captured_at: datetime | None = None


def _captured_at(content: bytes) -> datetime | None:
    if content[:4] == _ZSTD_MAGIC:
        packed = zstandard.ZstdDecompressor().decompress(content)
    else:
        packed = zlib.decompress(content)
    return msgspec.msgpack.decode(packed, type=_Captured).captured_at


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    rows = bind.execute(sa.text("SELECT id FROM snapshots WHERE captured_at IS NOT NULL")).scalars()
    for snapshot_id in list(rows):
        content = bind.execute(
            sa.text("SELECT content FROM snapshots WHERE id = :id"), {"id": snapshot_id}
        ).scalar_one()
        moment = _captured_at(content)
        if moment is None:
            continue
        stored = moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        bind.execute(
            sa.text("UPDATE snapshots SET captured_at = :at WHERE id = :id"),
            {"at": stored, "id": snapshot_id},
        )


def downgrade() -> None:
    """The UTC form is also what the earlier code reads (as UTC): nothing to undo."""
