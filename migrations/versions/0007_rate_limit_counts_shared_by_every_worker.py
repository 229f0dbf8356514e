"""Rate-limit counts shared by every worker, kept across restarts

Revision ID: 776ce58096f3
Revises: 3c7e5a1d9b24
Create Date: 2026-12-01 14:20:18

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "776ce58096f3"
down_revision = "3c7e5a1d9b24"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "rate_limit_counts",
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_rate_limit_counts")),
    )
    with op.batch_alter_table("rate_limit_counts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_rate_limit_counts_expires_at"), ["expires_at"], unique=False
        )


def downgrade():
    with op.batch_alter_table("rate_limit_counts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rate_limit_counts_expires_at"))
    op.drop_table("rate_limit_counts")
