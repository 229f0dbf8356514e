"""Answers earn a mark, a share of their question's points, so that partial credit and points
per question can be stored; an answer's response may be longer than one choice's id (the ids
chosen, or what was typed), and an attempt's points may be a fraction. Answers given before keep
their meaning: right earns 1, wrong 0. Only added or widened, so the release before keeps
serving (docs/deploy.md §7); SQLite keeps long text and fractions in the columns as declared.

Revision ID: 9b4e2c7a1d36
Revises: 3f7b2d9e6a15
Create Date: 2026-12-06 13:20:00

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "9b4e2c7a1d36"
down_revision = "3f7b2d9e6a15"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("answers", sa.Column("mark", sa.Float(), nullable=True))
    op.execute("UPDATE answers SET mark = CASE WHEN is_correct THEN 1.0 ELSE 0.0 END")
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column("answers", "choice_id", type_=sa.Text(), existing_type=sa.String(64))
        op.alter_column(
            "attempts",
            "points",
            type_=sa.Float(),
            existing_type=sa.Integer(),
            existing_nullable=False,
            existing_server_default="0",
        )


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute("UPDATE attempts SET points = round(points)")
        op.alter_column(
            "attempts",
            "points",
            type_=sa.Integer(),
            existing_type=sa.Float(),
            existing_nullable=False,
            existing_server_default="0",
            postgresql_using="points::integer",
        )
        op.alter_column(
            "answers",
            "choice_id",
            type_=sa.String(64),
            existing_type=sa.Text(),
            postgresql_using="left(choice_id, 64)",
        )
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.drop_column("mark")
