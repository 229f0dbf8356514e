"""LTI 1.3: the platforms that launch Quizwright and their deployments, the tool's signing keys,
the launch bookkeeping every app server shares, and who launched in which course

Revision ID: 7eda1f4dad49
Revises: 8ecd84ca3604
Create Date: 2026-12-01 17:14:12

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "7eda1f4dad49"
down_revision = "8ecd84ca3604"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "lti_launch_data",
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("value", sa.JSON(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_lti_launch_data")),
    )
    with op.batch_alter_table("lti_launch_data", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_lti_launch_data_expires_at"), ["expires_at"], unique=False
        )

    op.create_table(
        "lti_platforms",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("issuer", sa.String(length=255), nullable=False),
        sa.Column("client_id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("auth_login_url", sa.String(length=1000), nullable=False),
        sa.Column("auth_token_url", sa.String(length=1000), nullable=False),
        sa.Column("key_set_url", sa.String(length=1000), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_platforms")),
        sa.UniqueConstraint("issuer", "client_id", name=op.f("uq_lti_platforms_issuer_client_id")),
    )
    op.create_table(
        "lti_tool_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kid", sa.String(length=64), nullable=False),
        sa.Column("private_key", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_tool_keys")),
        sa.UniqueConstraint("kid", name=op.f("uq_lti_tool_keys_kid")),
    )
    op.create_table(
        "lti_deployments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform_id", sa.Integer(), nullable=False),
        sa.Column("deployment_id", sa.String(length=255), nullable=False),
        sa.ForeignKeyConstraint(
            ["platform_id"],
            ["lti_platforms.id"],
            name=op.f("fk_lti_deployments_platform_id_lti_platforms"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_deployments")),
        sa.UniqueConstraint(
            "platform_id",
            "deployment_id",
            name=op.f("uq_lti_deployments_platform_id_deployment_id"),
        ),
    )
    op.create_table(
        "lti_users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform_id", sa.Integer(), nullable=False),
        sa.Column("sub", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("instructor_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["instructor_id"],
            ["instructors.id"],
            name=op.f("fk_lti_users_instructor_id_instructors"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["platform_id"],
            ["lti_platforms.id"],
            name=op.f("fk_lti_users_platform_id_lti_platforms"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_users")),
        sa.UniqueConstraint("platform_id", "sub", name=op.f("uq_lti_users_platform_id_sub")),
    )
    with op.batch_alter_table("lti_users", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_lti_users_instructor_id"), ["instructor_id"], unique=False
        )

    op.create_table(
        "lti_courses",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform_id", sa.Integer(), nullable=False),
        sa.Column("context_id", sa.String(length=255), nullable=False),
        sa.Column("class_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["class_id"],
            ["classes.id"],
            name=op.f("fk_lti_courses_class_id_classes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["platform_id"],
            ["lti_platforms.id"],
            name=op.f("fk_lti_courses_platform_id_lti_platforms"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_courses")),
        sa.UniqueConstraint("class_id", name=op.f("uq_lti_courses_class_id")),
        sa.UniqueConstraint(
            "platform_id", "context_id", name=op.f("uq_lti_courses_platform_id_context_id")
        ),
    )
    op.create_table(
        "lti_attempts",
        sa.Column("attempt_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("resource_link_id", sa.String(length=255), nullable=False),
        sa.ForeignKeyConstraint(
            ["attempt_id"],
            ["attempts.id"],
            name=op.f("fk_lti_attempts_attempt_id_attempts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["lti_users.id"],
            name=op.f("fk_lti_attempts_user_id_lti_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("attempt_id", name=op.f("pk_lti_attempts")),
    )
    with op.batch_alter_table("lti_attempts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_lti_attempts_user_id"), ["user_id"], unique=False)


def downgrade():
    with op.batch_alter_table("lti_attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lti_attempts_user_id"))

    op.drop_table("lti_attempts")
    op.drop_table("lti_courses")
    with op.batch_alter_table("lti_users", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lti_users_instructor_id"))

    op.drop_table("lti_users")
    op.drop_table("lti_deployments")
    op.drop_table("lti_tool_keys")
    op.drop_table("lti_platforms")
    with op.batch_alter_table("lti_launch_data", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lti_launch_data_expires_at"))

    op.drop_table("lti_launch_data")
