"""Exams: whether an attempt lets its student move between questions and change answers until
they finish, the questions it asks in their order (shuffled, or drawn from pools), the ones
flagged to come back to, and every answer a change replaced; an instructor's override of one
answer's mark or one attempt's score, with the comment the student reads. Only added, so the
release before keeps serving (docs/deploy.md §7).

Revision ID: 3e8a6c2f1d57
Revises: 7c3f1b9d2e48
Create Date: 2026-12-06 22:15:00

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "3e8a6c2f1d57"
down_revision = "7c3f1b9d2e48"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("attempts") as table:
        table.add_column(
            sa.Column("moves_freely", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        table.add_column(sa.Column("question_order", sa.JSON()))
        table.add_column(sa.Column("flagged", sa.JSON()))
        table.add_column(sa.Column("score_override", sa.Float()))
        table.add_column(sa.Column("override_comment", sa.Text()))
    with op.batch_alter_table("answers") as table:
        table.add_column(sa.Column("override_mark", sa.Float()))
        table.add_column(sa.Column("override_comment", sa.Text()))
    op.create_table(
        "replaced_answers",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "attempt_id",
            sa.Integer(),
            sa.ForeignKey("attempts.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("question_id", sa.String(64), nullable=False),
        sa.Column("response", sa.Text(), nullable=False),
        sa.Column("is_correct", sa.Boolean(), nullable=False),
        sa.Column("mark", sa.Float()),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("replaced_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_replaced_answers_attempt_id", "replaced_answers", ["attempt_id"])


def downgrade():
    op.drop_index("ix_replaced_answers_attempt_id", "replaced_answers")
    op.drop_table("replaced_answers")
    with op.batch_alter_table("answers") as table:
        table.drop_column("override_comment")
        table.drop_column("override_mark")
    with op.batch_alter_table("attempts") as table:
        table.drop_column("override_comment")
        table.drop_column("score_override")
        table.drop_column("flagged")
        table.drop_column("question_order")
        table.drop_column("moves_freely")
