"""A course remembers where its platform lists its members (Names and Role Provisioning), for
"Load roster from the LMS"

Revision ID: 5d7c2a90e6b1
Revises: 9b2e6f14c0a8
Create Date: 2026-12-01 19:05:00

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "5d7c2a90e6b1"
down_revision = "9b2e6f14c0a8"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("lti_courses", schema=None) as batch_op:
        batch_op.add_column(sa.Column("memberships_url", sa.String(length=1000), nullable=True))


def downgrade():
    with op.batch_alter_table("lti_courses", schema=None) as batch_op:
        batch_op.drop_column("memberships_url")
