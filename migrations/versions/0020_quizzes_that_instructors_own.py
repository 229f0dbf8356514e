"""Quizzes get a record of their own: an owner (none for questions.json's site quizzes), shares,
a draft, the version served and every publication. The bank's quizzes become site quizzes,
listed as before; quizzes no longer offered become archived ones, so their reports stay.

Revision ID: 8d2a6c4e1f57
Revises: 5c1e9a7f3b02
Create Date: 2026-12-06 07:30:00

"""

import json
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "8d2a6c4e1f57"
down_revision = "5c1e9a7f3b02"
branch_labels = None
depends_on = None


def upgrade():
    quizzes = op.create_table(
        "quizzes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(length=64), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=True),
        sa.Column("listed", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=True),
        sa.Column("draft", sa.Text(), nullable=True),
        sa.Column("draft_revision", sa.Integer(), server_default="0", nullable=False),
        sa.Column("draft_saved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("draft_saved_by_id", sa.Integer(), nullable=True),
        sa.Column("published_version_id", sa.Integer(), nullable=True),
        sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["draft_saved_by_id"], ["instructors.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["owner_id"], ["instructors.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["published_version_id"], ["quiz_versions.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("slug"),
    )
    op.create_index(op.f("ix_quizzes_owner_id"), "quizzes", ["owner_id"], unique=False)
    op.create_table(
        "quiz_shares",
        sa.Column("quiz_id", sa.Integer(), nullable=False),
        sa.Column("instructor_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=8), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("role IN ('use', 'edit')", name="known_quiz_share_role"),
        sa.ForeignKeyConstraint(["instructor_id"], ["instructors.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["quiz_id"], ["quizzes.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("quiz_id", "instructor_id"),
    )
    op.create_index(
        op.f("ix_quiz_shares_instructor_id"), "quiz_shares", ["instructor_id"], unique=False
    )
    publications = op.create_table(
        "publications",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("quiz_id", sa.Integer(), nullable=False),
        sa.Column("quiz_version_id", sa.Integer(), nullable=False),
        sa.Column("published_by_id", sa.Integer(), nullable=True),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["published_by_id"], ["instructors.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["quiz_id"], ["quizzes.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["quiz_version_id"], ["quiz_versions.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_publications_quiz_id"), "publications", ["quiz_id"], unique=False)
    # A plain ADD COLUMN: a batch would rebuild the table, which the rows referring to it forbid.
    op.add_column(
        "offered_quizzes",
        sa.Column("listed", sa.Boolean(), server_default=sa.true(), nullable=False),
    )
    _records_of_the_bank(quizzes, publications)


def _records_of_the_bank(quizzes, publications):
    """A site quiz for each quiz the newest release offers, and an archived one for each quiz
    stored before and no longer offered, each with the version it last served."""
    bind = op.get_bind()
    stamp = sa.DateTime(timezone=True)
    versions = sa.table("quiz_versions", sa.column("id"), sa.column("slug"),
                        sa.column("snapshot"), sa.column("created_at", stamp))  # fmt: skip
    offers = sa.table("offered_quizzes", sa.column("release_id"), sa.column("position"),
                      sa.column("quiz_version_id"))  # fmt: skip
    releases = sa.table("releases", sa.column("id"), sa.column("created_at", stamp))
    latest = bind.execute(sa.select(sa.func.max(releases.c.id))).scalar()
    offered = bind.execute(
        sa.select(versions.c.id, versions.c.slug, versions.c.snapshot, releases.c.created_at)
        .join(offers, offers.c.quiz_version_id == versions.c.id)
        .join(releases, releases.c.id == offers.c.release_id)
        .where(offers.c.release_id == latest)
        .order_by(offers.c.position)
    ).all()
    newest = sa.select(sa.func.max(versions.c.id)).group_by(versions.c.slug)
    retired = bind.execute(
        sa.select(versions.c.id, versions.c.slug, versions.c.snapshot, versions.c.created_at)
        .where(versions.c.id.in_(newest))
        .order_by(versions.c.slug)
    ).all()
    now = datetime.now(UTC)
    served = {row.slug for row in offered}
    rows = [(row, position, None) for position, row in enumerate(offered)]
    rows += [(row, None, now) for row in retired if row.slug not in served]
    for number, (row, position, archived_at) in enumerate(rows, start=1):
        bind.execute(
            quizzes.insert().values(
                id=number, slug=row.slug, title=_title(row),
                owner_id=None, listed=True, position=position, draft_revision=0,
                published_version_id=row.id, archived_at=archived_at, created_at=now,
            )
        )  # fmt: skip
        bind.execute(
            publications.insert().values(
                quiz_id=number, quiz_version_id=row.id, published_at=row[3] or now
            )
        )
    if rows and bind.dialect.name == "postgresql":  # ids given by hand leave the sequences behind
        for table in ("quizzes", "publications"):
            bind.execute(sa.text(f"SELECT setval('{table}_id_seq', {len(rows)})"))


def _title(row) -> str:
    """The stored quiz's title; its slug where the snapshot holds none."""
    try:
        title = json.loads(row.snapshot).get("title")
    except (ValueError, AttributeError):
        title = None
    return (title if isinstance(title, str) and title else row.slug)[:200]


def downgrade():
    with op.batch_alter_table("offered_quizzes", schema=None) as batch_op:
        batch_op.drop_column("listed")
    op.drop_index(op.f("ix_publications_quiz_id"), table_name="publications")
    op.drop_table("publications")
    op.drop_index(op.f("ix_quiz_shares_instructor_id"), table_name="quiz_shares")
    op.drop_table("quiz_shares")
    op.drop_index(op.f("ix_quizzes_owner_id"), table_name="quizzes")
    op.drop_table("quizzes")
