"""An index of the exam attempts that can still change (moving freely, not finished, not
voided): a quiz's key stays held while any can, whatever their assignment's rule says now, and
every student page asks. Only added, so the release before keeps serving (docs/deploy.md §7).

Revision ID: 5b2f0c7e9a41
Revises: eac918d3ac5b
Create Date: 2026-12-08 00:40:00

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "5b2f0c7e9a41"
down_revision = "eac918d3ac5b"
branch_labels = None
depends_on = None

# As each database's queries write the test, so that its planner matches the index to them.
ON_SQLITE = sa.text("moves_freely = 1 AND finished_at IS NULL AND voided_at IS NULL")
ON_POSTGRESQL = sa.text("moves_freely AND finished_at IS NULL AND voided_at IS NULL")


def upgrade():
    with op.batch_alter_table("attempts") as table:
        table.create_index(
            "ix_attempts_changing",
            # Its test's columns too: SQLite then prefers it to the index of every attempt.
            ["assignment_id", "moves_freely", "finished_at", "voided_at"],
            sqlite_where=ON_SQLITE,
            postgresql_where=ON_POSTGRESQL,
        )


def downgrade():
    with op.batch_alter_table("attempts") as table:
        table.drop_index("ix_attempts_changing")
