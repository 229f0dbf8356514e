"""LTI learners are roster students of their course's class, and launched attempts remember
the line item their grade goes to

Revision ID: 3c51e0a9b7d2
Revises: 5c1e0a7d9b42
Create Date: 2026-12-01 18:50:00

A learner's launch now puts them on the class's roster, linked to the platform's user (its
`sub`) by lti_learners, so their attempts follow the assignment's rules as any roster
student's do. Attempts launched before keep their rows and their names.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "3c51e0a9b7d2"
down_revision = "5c1e0a7d9b42"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "lti_learners",
        sa.Column("roster_student_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("class_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["class_id"],
            ["classes.id"],
            name=op.f("fk_lti_learners_class_id_classes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["roster_student_id"],
            ["roster_students.id"],
            name=op.f("fk_lti_learners_roster_student_id_roster_students"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["lti_users.id"],
            name=op.f("fk_lti_learners_user_id_lti_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("roster_student_id", name=op.f("pk_lti_learners")),
        sa.UniqueConstraint("user_id", "class_id", name=op.f("uq_lti_learners_user_id_class_id")),
    )
    with op.batch_alter_table("lti_learners", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_lti_learners_class_id"), ["class_id"], unique=False)
    with op.batch_alter_table("lti_attempts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("line_item_url", sa.String(length=1000), nullable=True))


def downgrade():
    with op.batch_alter_table("lti_attempts", schema=None) as batch_op:
        batch_op.drop_column("line_item_url")
    with op.batch_alter_table("lti_learners", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lti_learners_class_id"))
    op.drop_table("lti_learners")
