"""Attempts are found by browser, so that a student can continue an unfinished one

Revision ID: 7c4e1a9d2b60
Revises: b8193cdc3e84
Create Date: 2026-12-01 14:30:00

"""

from alembic import op

# revision identifiers, used by Alembic.
revision = "7c4e1a9d2b60"
down_revision = "b8193cdc3e84"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_attempts_browser"), ["browser"], unique=False)


def downgrade():
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_attempts_browser"))
