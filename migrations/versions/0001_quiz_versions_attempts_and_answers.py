"""Quiz versions, attempts and answers

Revision ID: 67085d650851
Revises:
Create Date: 2026-11-29 17:22:39.765525

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "67085d650851"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "quiz_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(length=64), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("snapshot", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_quiz_versions")),
        sa.UniqueConstraint("slug", "digest", name=op.f("uq_quiz_versions_slug_digest")),
    )
    op.create_table(
        "attempts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(length=43), nullable=False),
        sa.Column("quiz_version_id", sa.Integer(), nullable=False),
        sa.Column("student_name", sa.String(length=80), nullable=False),
        sa.Column("browser", sa.String(length=43), nullable=False),
        sa.Column("choice_order", sa.JSON(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["quiz_version_id"],
            ["quiz_versions.id"],
            name=op.f("fk_attempts_quiz_version_id_quiz_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_attempts")),
        sa.UniqueConstraint("token", name=op.f("uq_attempts_token")),
    )
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_attempts_quiz_version_id"), ["quiz_version_id"], unique=False
        )

    op.create_table(
        "answers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("attempt_id", sa.Integer(), nullable=False),
        sa.Column("question_id", sa.String(length=64), nullable=False),
        sa.Column("choice_id", sa.String(length=64), nullable=False),
        sa.Column("is_correct", sa.Boolean(), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["attempt_id"],
            ["attempts.id"],
            name=op.f("fk_answers_attempt_id_attempts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_answers")),
        sa.UniqueConstraint(
            "attempt_id", "question_id", name=op.f("uq_answers_attempt_id_question_id")
        ),
    )


def downgrade():
    op.drop_table("answers")
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_attempts_quiz_version_id"))

    op.drop_table("attempts")
    op.drop_table("quiz_versions")
