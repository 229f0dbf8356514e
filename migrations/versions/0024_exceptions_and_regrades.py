"""Exceptions to an assignment's rules for one student (extra time, attempts, a later close),
each with when an attempt under it can no longer be answered; answers marked again after
their question's key was corrected. Only added, so the release before keeps serving
(docs/deploy.md §7).

Revision ID: 7c3f1b9d2e48
Revises: 5d1a8c3e9f20
Create Date: 2026-12-06 19:40:00

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "7c3f1b9d2e48"
down_revision = "5d1a8c3e9f20"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "accommodations",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "assignment_id",
            sa.Integer(),
            sa.ForeignKey("assignments.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("student_key", sa.String(240), nullable=False),
        sa.Column("student_name", sa.String(80), nullable=False),
        sa.Column("time_limit_minutes", sa.Integer()),
        sa.Column("time_factor", sa.Float()),
        sa.Column("attempts_allowed", sa.Integer()),
        sa.Column("opens_at", sa.DateTime(timezone=True)),
        sa.Column("closes_at", sa.DateTime(timezone=True)),
        sa.Column("ends_at", sa.DateTime(timezone=True)),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("assignment_id", "student_key"),
        sa.CheckConstraint(
            "time_limit_minutes IS NULL OR time_limit_minutes BETWEEN 1 AND 14400",
            name="exception_time_within_ten_days",
        ),
        sa.CheckConstraint(
            "time_factor IS NULL OR time_factor BETWEEN 1 AND 10", name="exception_factor_1_to_10"
        ),
        sa.CheckConstraint(
            "time_limit_minutes IS NULL OR time_factor IS NULL", name="exception_time_said_once"
        ),
        sa.CheckConstraint(
            "attempts_allowed IS NULL OR attempts_allowed BETWEEN 1 AND 100",
            name="exception_attempts_1_to_100",
        ),
    )
    op.create_index("ix_accommodations_assignment_id", "accommodations", ["assignment_id"])
    with op.batch_alter_table("answers") as table:
        table.add_column(sa.Column("regraded_at", sa.DateTime(timezone=True)))
        table.add_column(
            sa.Column(
                "regraded_version_id",
                sa.Integer(),
                sa.ForeignKey("quiz_versions.id", name="fk_answers_regraded_version_id"),
            )
        )


def downgrade():
    with op.batch_alter_table("answers") as table:
        table.drop_column("regraded_version_id")
        table.drop_column("regraded_at")
    op.drop_index("ix_accommodations_assignment_id", "accommodations")
    op.drop_table("accommodations")
