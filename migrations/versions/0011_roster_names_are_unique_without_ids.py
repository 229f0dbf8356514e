"""Roster names are unique within a class among students without ids, whatever the race

Revision ID: 8ecd84ca3604
Revises: e928b78e10ef
Create Date: 2026-12-01 17:30:00

Two "Add students" requests at once (a double click) each check the roster before either has
stored anything; for students with ids the unique (class, id) stops the second, and this index
does the same for students known by name alone. Existing roster students get their name's key.
"""

import unicodedata

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "8ecd84ca3604"
down_revision = "e928b78e10ef"
branch_labels = None
depends_on = None

roster_students = sa.table(
    "roster_students", sa.column("id", sa.Integer), sa.column("name", sa.String),
    sa.column("name_key", sa.String),
)  # fmt: skip
WITHOUT_ID = sa.text("student_number IS NULL AND removed_at IS NULL")


def _key(name: str) -> str:
    """models.student_key as of this revision, for the names of the roster's time (tidied when
    added: no control characters); a migration keeps its own copy of the rule."""
    shown = "".join(char for char in name if unicodedata.category(char) != "Cf")
    return " ".join(shown.split()).casefold()


def upgrade():
    with op.batch_alter_table("roster_students", schema=None) as batch_op:
        batch_op.add_column(sa.Column("name_key", sa.String(length=240), nullable=True))

    connection = op.get_bind()
    names = connection.execute(sa.select(roster_students.c.id, roster_students.c.name)).all()
    if names:
        connection.execute(
            roster_students.update()
            .where(roster_students.c.id == sa.bindparam("student_id"))
            .values(name_key=sa.bindparam("key")),
            [{"student_id": id_, "key": _key(name)} for id_, name in names],
        )

    with op.batch_alter_table("roster_students", schema=None) as batch_op:
        batch_op.alter_column("name_key", existing_type=sa.String(length=240), nullable=False)
        batch_op.create_index(
            "uq_roster_students_name_without_id",
            ["class_id", "name_key"],
            unique=True,
            sqlite_where=WITHOUT_ID,
            postgresql_where=WITHOUT_ID,
        )


def downgrade():
    with op.batch_alter_table("roster_students", schema=None) as batch_op:
        batch_op.drop_index("uq_roster_students_name_without_id")
        batch_op.drop_column("name_key")
