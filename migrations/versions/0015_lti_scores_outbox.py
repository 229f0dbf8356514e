"""The outbox of grade passback: scores written with the answer that finished the attempt,
sent to the platforms' line items later by `flask lti send-scores`

Revision ID: 9b2e6f14c0a8
Revises: 3c51e0a9b7d2
Create Date: 2026-12-01 18:55:00

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "9b2e6f14c0a8"
down_revision = "3c51e0a9b7d2"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "lti_scores",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("attempt_id", sa.Integer(), nullable=False),
        sa.Column("occasion", sa.String(length=16), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("line_item_url", sa.String(length=1000), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=8), nullable=False),
        sa.Column("tries", sa.Integer(), nullable=False),
        sa.Column("next_try_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "state IN ('waiting', 'sent', 'failed')", name=op.f("ck_lti_scores_known_score_state")
        ),
        sa.ForeignKeyConstraint(
            ["attempt_id"],
            ["attempts.id"],
            name=op.f("fk_lti_scores_attempt_id_attempts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["lti_users.id"],
            name=op.f("fk_lti_scores_user_id_lti_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_scores")),
        sa.UniqueConstraint(
            "attempt_id", "occasion", name=op.f("uq_lti_scores_attempt_id_occasion")
        ),
    )
    with op.batch_alter_table("lti_scores", schema=None) as batch_op:
        batch_op.create_index("ix_lti_scores_due", ["state", "next_try_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_lti_scores_user_id"), ["user_id"], unique=False)


def downgrade():
    with op.batch_alter_table("lti_scores", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lti_scores_user_id"))
        batch_op.drop_index("ix_lti_scores_due")
    op.drop_table("lti_scores")
