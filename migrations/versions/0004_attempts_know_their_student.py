"""Attempts know their student, so that reports group them in SQL

Revision ID: 5b0f3c2e7a91
Revises: 9806f8a40007
Create Date: 2026-11-29 20:05:00

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "5b0f3c2e7a91"
down_revision = "9806f8a40007"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("student_key", sa.String(length=240), nullable=True))

    # The key is Python's casefold, which SQL's lower() does not match beyond ASCII.
    attempts = sa.table(
        "attempts", sa.column("id", sa.Integer), sa.column("student_name", sa.String),
        sa.column("student_key", sa.String),
    )  # fmt: skip
    connection = op.get_bind()
    names = connection.execute(sa.select(attempts.c.id, attempts.c.student_name)).all()
    if names:
        connection.execute(
            attempts.update()
            .where(attempts.c.id == sa.bindparam("attempt_id"))
            .values(student_key=sa.bindparam("key")),
            [{"attempt_id": id_, "key": " ".join(name.split()).casefold()} for id_, name in names],
        )

    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.alter_column("student_key", existing_type=sa.String(length=240), nullable=False)


def downgrade():
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.drop_column("student_key")
