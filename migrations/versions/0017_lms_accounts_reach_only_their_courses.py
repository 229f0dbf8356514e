"""Accounts an LMS launch made reach only their courses' classes, until an admin grants them

Revision ID: 7e3a1c5b9d20
Revises: 5d7c2a90e6b1
Create Date: 2026-12-02 17:00:00

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "7e3a1c5b9d20"
down_revision = "5d7c2a90e6b1"
branch_labels = None
depends_on = None


def upgrade():
    # A plain ALTER on SQLite too: batch mode would copy the table, which classes refer to.
    op.add_column(
        "instructors",
        sa.Column("course_only", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    # Accounts made by a launch carry the password no hash matches (app/lti/people.py).
    op.execute("UPDATE instructors SET course_only = true WHERE password_hash = '!lti'")


def downgrade():
    with op.batch_alter_table("instructors", schema=None) as batch_op:
        batch_op.drop_column("course_only")
