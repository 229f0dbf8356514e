"""Instructors and classes with join codes

Revision ID: d86e449ffcf1
Revises: 67085d650851
Create Date: 2026-11-29 18:08:00.357518

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "d86e449ffcf1"
down_revision = "67085d650851"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "instructors",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("is_admin", sa.Boolean(), nullable=False),
        sa.Column("session_token", sa.String(length=43), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_instructors")),
        sa.UniqueConstraint("session_token", name=op.f("uq_instructors_session_token")),
        sa.UniqueConstraint("username", name=op.f("uq_instructors_username")),
    )
    op.create_table(
        "classes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("join_code", sa.String(length=6), nullable=False),
        sa.Column("instructor_id", sa.Integer(), nullable=False),
        sa.Column("is_open", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["instructor_id"], ["instructors.id"], name=op.f("fk_classes_instructor_id_instructors")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_classes")),
        sa.UniqueConstraint("join_code", name=op.f("uq_classes_join_code")),
    )
    with op.batch_alter_table("classes", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_classes_instructor_id"), ["instructor_id"], unique=False
        )

    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("class_id", sa.Integer(), nullable=True))
        batch_op.create_index(
            "ix_attempts_class_report", ["class_id", "quiz_version_id", "started_at"], unique=False
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_attempts_class_id_classes"), "classes", ["class_id"], ["id"]
        )


def downgrade():
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_attempts_class_id_classes"), type_="foreignkey")
        batch_op.drop_index("ix_attempts_class_report")
        batch_op.drop_column("class_id")

    with op.batch_alter_table("classes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_classes_instructor_id"))

    op.drop_table("classes")
    op.drop_table("instructors")
