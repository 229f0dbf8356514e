"""Classes assign quizzes with rules, keep rosters, are shared and archived; attempts can be voided

Revision ID: e928b78e10ef
Revises: 7c4e1a9d2b60
Create Date: 2026-12-01 17:11:42

Every class, attempt and score stays as it was: the new columns start empty (no assignment, no
roster, no time limit, nothing voided, not archived), which is how classes behaved before.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "e928b78e10ef"
down_revision = "7c4e1a9d2b60"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "assignments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("class_id", sa.Integer(), nullable=False),
        sa.Column("quiz_slug", sa.String(length=64), nullable=False),
        sa.Column("opens_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("closes_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("time_limit_minutes", sa.Integer(), nullable=True),
        sa.Column("attempts_allowed", sa.Integer(), nullable=True),
        sa.Column("grade_from", sa.String(length=8), nullable=False),
        sa.Column("feedback", sa.String(length=16), nullable=False),
        sa.Column("feedback_released_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "feedback IN ('each-answer', 'after-attempt', 'after-close')",
            name=op.f("ck_assignments_known_feedback"),
        ),
        sa.CheckConstraint(
            "grade_from IN ('first', 'best', 'latest', 'all')",
            name=op.f("ck_assignments_known_grade_from"),
        ),
        sa.CheckConstraint(
            "attempts_allowed IS NULL OR attempts_allowed BETWEEN 1 AND 100",
            name=op.f("ck_assignments_attempts_allowed_1_to_100"),
        ),
        sa.CheckConstraint(
            "closes_at IS NULL OR opens_at IS NULL OR closes_at > opens_at",
            name=op.f("ck_assignments_closes_after_opens"),
        ),
        sa.CheckConstraint(
            "time_limit_minutes IS NULL OR time_limit_minutes BETWEEN 1 AND 1440",
            name=op.f("ck_assignments_time_limit_within_a_day"),
        ),
        sa.ForeignKeyConstraint(
            ["class_id"],
            ["classes.id"],
            name=op.f("fk_assignments_class_id_classes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_assignments")),
        sa.UniqueConstraint(
            "class_id", "quiz_slug", name=op.f("uq_assignments_class_id_quiz_slug")
        ),
    )
    op.create_table(
        "class_shares",
        sa.Column("class_id", sa.Integer(), nullable=False),
        sa.Column("instructor_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=8), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "role IN ('view', 'manage')", name=op.f("ck_class_shares_known_share_role")
        ),
        sa.ForeignKeyConstraint(
            ["class_id"],
            ["classes.id"],
            name=op.f("fk_class_shares_class_id_classes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["instructor_id"],
            ["instructors.id"],
            name=op.f("fk_class_shares_instructor_id_instructors"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("class_id", "instructor_id", name=op.f("pk_class_shares")),
    )
    with op.batch_alter_table("class_shares", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_class_shares_instructor_id"), ["instructor_id"], unique=False
        )

    op.create_table(
        "merged_students",
        sa.Column("class_id", sa.Integer(), nullable=False),
        sa.Column("student_key", sa.String(length=240), nullable=False),
        sa.Column("into_key", sa.String(length=240), nullable=False),
        sa.ForeignKeyConstraint(
            ["class_id"],
            ["classes.id"],
            name=op.f("fk_merged_students_class_id_classes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("class_id", "student_key", name=op.f("pk_merged_students")),
    )
    op.create_table(
        "roster_students",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("class_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("student_number", sa.String(length=254), nullable=True),
        sa.Column("sign_in_code", sa.String(length=8), nullable=False),
        sa.Column("removed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["class_id"],
            ["classes.id"],
            name=op.f("fk_roster_students_class_id_classes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_roster_students")),
        sa.UniqueConstraint(
            "class_id", "student_number", name=op.f("uq_roster_students_class_id_student_number")
        ),
        sa.UniqueConstraint("sign_in_code", name=op.f("uq_roster_students_sign_in_code")),
    )
    with op.batch_alter_table("roster_students", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_roster_students_class_id"), ["class_id"], unique=False)

    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("assignment_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("roster_student_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("seat", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("ends_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("voided_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("voided_by_id", sa.Integer(), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_attempts_assignment_id"), ["assignment_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_attempts_roster_student_id"), ["roster_student_id"], unique=False
        )
        batch_op.create_unique_constraint(
            batch_op.f("uq_attempts_assignment_id_student_key_seat"),
            ["assignment_id", "student_key", "seat"],
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_attempts_voided_by_id_instructors"),
            "instructors",
            ["voided_by_id"],
            ["id"],
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_attempts_assignment_id_assignments"),
            "assignments",
            ["assignment_id"],
            ["id"],
            ondelete="SET NULL",
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_attempts_roster_student_id_roster_students"),
            "roster_students",
            ["roster_student_id"],
            ["id"],
            ondelete="SET NULL",
        )

    with op.batch_alter_table("classes", schema=None) as batch_op:
        batch_op.add_column(sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True))

    with op.batch_alter_table("instructors", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("time_zone", sa.String(length=64), server_default="UTC", nullable=False)
        )


def downgrade():
    with op.batch_alter_table("instructors", schema=None) as batch_op:
        batch_op.drop_column("time_zone")

    with op.batch_alter_table("classes", schema=None) as batch_op:
        batch_op.drop_column("archived_at")

    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("fk_attempts_roster_student_id_roster_students"), type_="foreignkey"
        )
        batch_op.drop_constraint(
            batch_op.f("fk_attempts_assignment_id_assignments"), type_="foreignkey"
        )
        batch_op.drop_constraint(
            batch_op.f("fk_attempts_voided_by_id_instructors"), type_="foreignkey"
        )
        batch_op.drop_constraint(
            batch_op.f("uq_attempts_assignment_id_student_key_seat"), type_="unique"
        )
        batch_op.drop_index(batch_op.f("ix_attempts_roster_student_id"))
        batch_op.drop_index(batch_op.f("ix_attempts_assignment_id"))
        batch_op.drop_column("voided_by_id")
        batch_op.drop_column("voided_at")
        batch_op.drop_column("finished_at")
        batch_op.drop_column("ends_at")
        batch_op.drop_column("seat")
        batch_op.drop_column("roster_student_id")
        batch_op.drop_column("assignment_id")

    with op.batch_alter_table("roster_students", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_roster_students_class_id"))

    op.drop_table("roster_students")
    op.drop_table("merged_students")
    with op.batch_alter_table("class_shares", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_class_shares_instructor_id"))

    op.drop_table("class_shares")
    op.drop_table("assignments")
