"""Instructors can be disabled: they cannot log in, and their classes stay

Revision ID: b8193cdc3e84
Revises: 776ce58096f3
Create Date: 2026-12-01 14:24:10

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "b8193cdc3e84"
down_revision = "776ce58096f3"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("instructors", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("is_active", sa.Boolean(), server_default=sa.true(), nullable=False)
        )


def downgrade():
    with op.batch_alter_table("instructors", schema=None) as batch_op:
        batch_op.drop_column("is_active")
