"""An instructor's time zone is empty until they choose one: pages follow their browser's till then

Revision ID: 5c1e9a7f3b02
Revises: 2b8f0d4e6a13
Create Date: 2026-12-04 01:40:00

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "5c1e9a7f3b02"
down_revision = "2b8f0d4e6a13"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("instructors", schema=None) as batch_op:
        batch_op.alter_column(
            "time_zone", existing_type=sa.String(length=64), nullable=True, server_default=None
        )
    # "UTC" was everyone's default, chosen or not: most never chose it, so their pages now
    # follow their browser's zone; one who did chooses it again on the assignment form.
    op.execute("UPDATE instructors SET time_zone = NULL WHERE time_zone = 'UTC'")


def downgrade():
    op.execute("UPDATE instructors SET time_zone = 'UTC' WHERE time_zone IS NULL")
    with op.batch_alter_table("instructors", schema=None) as batch_op:
        batch_op.alter_column(
            "time_zone", existing_type=sa.String(length=64), nullable=False, server_default="UTC"
        )
