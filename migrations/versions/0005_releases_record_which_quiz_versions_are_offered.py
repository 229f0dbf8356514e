"""Releases record which quiz versions are offered, so every worker serves the same bank

Revision ID: c3f69411be20
Revises: 5b0f3c2e7a91
Create Date: 2026-12-01 14:13:35

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "c3f69411be20"
down_revision = "5b0f3c2e7a91"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "releases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_releases")),
    )
    op.create_table(
        "offered_quizzes",
        sa.Column("release_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("quiz_version_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["quiz_version_id"], ["quiz_versions.id"],
            name=op.f("fk_offered_quizzes_quiz_version_id_quiz_versions"),
        ),
        sa.ForeignKeyConstraint(
            ["release_id"], ["releases.id"], name=op.f("fk_offered_quizzes_release_id_releases")
        ),
        sa.PrimaryKeyConstraint("release_id", "position", name=op.f("pk_offered_quizzes")),
    )  # fmt: skip


def downgrade():
    op.drop_table("offered_quizzes")
    op.drop_table("releases")
