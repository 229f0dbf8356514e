"""An LMS course is keyed by platform, deployment and context: LTI makes a context id unique
only within its deployment

Revision ID: 2b8f0d4e6a13
Revises: 7e3a1c5b9d20
Create Date: 2026-12-02 17:30:00

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "2b8f0d4e6a13"
down_revision = "7e3a1c5b9d20"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("lti_courses", schema=None) as batch_op:
        batch_op.add_column(sa.Column("deployment_id", sa.String(length=255), nullable=True))
        batch_op.drop_constraint("uq_lti_courses_platform_id_context_id", type_="unique")
        batch_op.create_unique_constraint(
            batch_op.f("uq_lti_courses_platform_id_deployment_id_context_id"),
            ["platform_id", "deployment_id", "context_id"],
        )
    # A platform with one deployment: its courses are that deployment's. With several, the
    # course stays unclaimed until a launch from one of them (app/lti/people.py).
    op.execute(
        "UPDATE lti_courses SET deployment_id = ("
        " SELECT MIN(deployment_id) FROM lti_deployments"
        " WHERE lti_deployments.platform_id = lti_courses.platform_id)"
        " WHERE (SELECT COUNT(*) FROM lti_deployments"
        " WHERE lti_deployments.platform_id = lti_courses.platform_id) = 1"
    )


def downgrade():
    with op.batch_alter_table("lti_courses", schema=None) as batch_op:
        batch_op.drop_constraint(
            "uq_lti_courses_platform_id_deployment_id_context_id", type_="unique"
        )
        batch_op.create_unique_constraint(
            batch_op.f("uq_lti_courses_platform_id_context_id"), ["platform_id", "context_id"]
        )
        batch_op.drop_column("deployment_id")
