"""audit_state keeps the chain's head

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21 12:00:00

Appends now advance the head in audit_state row 1 in the same statement that writes the
record (one round trip, the row lock serializing the chain), and verify compares the last
record with it. Existing databases get row 1 and a head copied from their newest record.
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

GENESIS_HASH = "0" * 64


def upgrade() -> None:
    with op.batch_alter_table("audit_state") as batch:
        batch.add_column(
            sa.Column(
                "head_seq",
                sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                server_default="0",
                nullable=False,
            )
        )
        batch.add_column(
            sa.Column(
                "head_hash", sa.String(length=64), server_default=GENESIS_HASH, nullable=False
            )
        )
        batch.add_column(
            sa.Column(
                "head_prev_hash", sa.String(length=64), server_default=GENESIS_HASH, nullable=False
            )
        )
    conn = op.get_bind()
    exists = conn.execute(sa.text("SELECT 1 FROM audit_state WHERE id = 1")).first()
    if exists is None:
        conn.execute(
            sa.text(
                "INSERT INTO audit_state (id, anchor_hash, anchor_seq, note) "
                "VALUES (1, :genesis, 0, '')"
            ),
            {"genesis": GENESIS_HASH},
        )
    newest = conn.execute(
        sa.text("SELECT seq, record_hash, prev_hash FROM decisions ORDER BY seq DESC LIMIT 1")
    ).first()
    if newest is not None:
        conn.execute(
            sa.text(
                "UPDATE audit_state SET head_seq = :seq, head_hash = :hash, "
                "head_prev_hash = :prev WHERE id = 1"
            ),
            {"seq": newest.seq, "hash": newest.record_hash, "prev": newest.prev_hash},
        )
    else:
        conn.execute(
            sa.text(
                "UPDATE audit_state SET head_seq = anchor_seq, head_hash = anchor_hash, "
                "head_prev_hash = anchor_hash WHERE id = 1"
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("audit_state") as batch:
        batch.drop_column("head_prev_hash")
        batch.drop_column("head_hash")
        batch.drop_column("head_seq")
