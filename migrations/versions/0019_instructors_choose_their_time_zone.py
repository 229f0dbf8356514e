"""An instructor's time zone says whether they chose it: until they do, pages follow their
browser's. A column added, so that servers not yet restarted keep serving (docs/deploy.md §7)

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
    # A plain ADD COLUMN: a batch would rebuild the table, which the rows referring to it forbid.
    op.add_column(
        "instructors",
        sa.Column("time_zone_chosen", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    # "UTC" was everyone's default, chosen or not; any other zone was chosen on a form.
    op.execute("UPDATE instructors SET time_zone_chosen = true WHERE time_zone <> 'UTC'")


def downgrade():
    with op.batch_alter_table("instructors", schema=None) as batch_op:
        batch_op.drop_column("time_zone_chosen")
