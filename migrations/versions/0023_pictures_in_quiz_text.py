"""Pictures in quiz text: kept by their content's digest, so a quiz version that names one shows
it for as long as the version is kept. Only added, so the release before keeps serving
(docs/deploy.md §7).

Revision ID: 5d1a8c3e9f20
Revises: 9b4e2c7a1d36
Create Date: 2026-12-06 17:40:00

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "5d1a8c3e9f20"
down_revision = "9b4e2c7a1d36"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "images",
        sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("width", sa.Integer(), nullable=False),
        sa.Column("height", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade():
    op.drop_table("images")
