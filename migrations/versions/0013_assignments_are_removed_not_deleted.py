"""Assignments are removed, not deleted: a removed one keeps its attempts' feedback rule and
seats; and assignments are found by quiz, to hold starts outside a class while feedback waits

Revision ID: 5c1e0a7d9b42
Revises: 7eda1f4dad49
Create Date: 2026-12-01 18:45:00

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "5c1e0a7d9b42"
down_revision = "7eda1f4dad49"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("assignments", schema=None) as batch_op:
        batch_op.add_column(sa.Column("removed_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index(batch_op.f("ix_assignments_quiz_slug"), ["quiz_slug"], unique=False)


def downgrade():
    with op.batch_alter_table("assignments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_assignments_quiz_slug"))
        batch_op.drop_column("removed_at")
