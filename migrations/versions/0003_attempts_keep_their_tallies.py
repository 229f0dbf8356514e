"""Attempts keep their answered count, points and last answer time

Revision ID: 9806f8a40007
Revises: d86e449ffcf1
Create Date: 2026-11-29 19:05:36.423414

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "9806f8a40007"
down_revision = "d86e449ffcf1"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("answered", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("points", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("last_answer_at", sa.DateTime(timezone=True), nullable=True))

    # Attempts answered before this revision get their tallies from their answers.
    op.execute(
        "UPDATE attempts SET"
        " answered = (SELECT count(*) FROM answers WHERE answers.attempt_id = attempts.id),"
        " points = (SELECT count(*) FROM answers"
        "           WHERE answers.attempt_id = attempts.id AND answers.is_correct),"
        " last_answer_at = (SELECT max(answered_at) FROM answers"
        "                   WHERE answers.attempt_id = attempts.id)"
    )


def downgrade():
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.drop_column("last_answer_at")
        batch_op.drop_column("points")
        batch_op.drop_column("answered")
