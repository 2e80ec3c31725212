"""snapshots keep the scheduler's view of their content

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21 13:00:00

A nullable blob beside the snapshot's content: the scheduler's view of it in a compact form
(service/store/scheduler_view.py), so that the first placement or preemption on a stored
snapshot restores that view instead of decoding every pod. Rows stored before have none and
are decided on in full; a server's warming thread writes it for them.
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("snapshots") as batch:
        batch.add_column(sa.Column("scheduler_view", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("snapshots") as batch:
        batch.drop_column("scheduler_view")
