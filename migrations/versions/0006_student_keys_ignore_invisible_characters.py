"""Student keys ignore invisible characters, so "Ada" with a zero-width space is Ada

Revision ID: 3c7e5a1d9b24
Revises: c3f69411be20
Create Date: 2026-12-01 14:30:00

"""

import unicodedata

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "3c7e5a1d9b24"
down_revision = "c3f69411be20"
branch_labels = None
depends_on = None

attempts = sa.table(
    "attempts", sa.column("id", sa.Integer), sa.column("student_name", sa.String),
    sa.column("student_key", sa.String),
)  # fmt: skip


def _before(name: str) -> str:
    return " ".join(name.split()).casefold()


def _after(name: str) -> str:
    """models.student_key as of this revision; a migration keeps its own copy of the rule."""
    return _before("".join(char for char in name if unicodedata.category(char) != "Cf"))


def _rekey(rule) -> None:
    connection = op.get_bind()
    names = connection.execute(
        sa.select(attempts.c.id, attempts.c.student_name, attempts.c.student_key)
    ).all()
    changed = [
        {"attempt_id": id_, "key": rule(name)} for id_, name, key in names if rule(name) != key
    ]
    if changed:
        connection.execute(
            attempts.update()
            .where(attempts.c.id == sa.bindparam("attempt_id"))
            .values(student_key=sa.bindparam("key")),
            changed,
        )


def upgrade():
    _rekey(_after)


def downgrade():
    _rekey(_before)
