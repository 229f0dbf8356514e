"""Quiz text is read as Markdown from this release on: text stored before it was plain, so its
Markdown marks are escaped wherever Markdown would show it otherwise ("2*3*4" stays 2*3*4), in
every stored version and draft. Attempts' reviews read as they did.

Revision ID: 3f7b2d9e6a15
Revises: 8d2a6c4e1f57
Create Date: 2026-12-06 10:45:00

"""

import hashlib
import json

import sqlalchemy as sa
from alembic import op

from app.text import from_plain

# revision identifiers, used by Alembic.
revision = "3f7b2d9e6a15"
down_revision = "8d2a6c4e1f57"
branch_labels = None
depends_on = None


def _as_markdown(quiz: dict) -> dict:
    """The quiz with its plain text as the Markdown that shows it as written."""
    if isinstance(quiz.get("description"), str):
        quiz["description"] = from_plain(quiz["description"])
    for question in quiz.get("questions", []):
        for key in ("prompt", "explanation"):
            if isinstance(question.get(key), str):
                question[key] = from_plain(question[key])
        for choice in question.get("choices", []):
            for key in ("text", "explanation"):
                if isinstance(choice.get(key), str):
                    choice[key] = from_plain(choice[key])
    return quiz


def _canonical(quiz: dict) -> str:
    """As app/bank.py's build_quiz writes a snapshot, whose sha256 is the version's digest."""
    return json.dumps(quiz, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def upgrade():
    bind = op.get_bind()
    versions = sa.table(
        "quiz_versions", sa.column("id"), sa.column("digest"), sa.column("snapshot")
    )
    for row in bind.execute(sa.select(versions.c.id, versions.c.snapshot)).all():
        quiz = _as_markdown(json.loads(row.snapshot))
        if quiz != json.loads(row.snapshot):
            snapshot = _canonical(quiz)
            bind.execute(
                versions.update()
                .where(versions.c.id == row.id)
                .values(snapshot=snapshot, digest=hashlib.sha256(snapshot.encode()).hexdigest())
            )
    quizzes = sa.table("quizzes", sa.column("id"), sa.column("draft"))
    for row in bind.execute(sa.select(quizzes.c.id, quizzes.c.draft)).all():
        if row.draft is None:
            continue
        draft = _as_markdown(json.loads(row.draft))
        if draft != json.loads(row.draft):
            stored = json.dumps(draft, ensure_ascii=False, separators=(",", ":"))
            bind.execute(quizzes.update().where(quizzes.c.id == row.id).values(draft=stored))


def downgrade():
    # The escaped text still reads right as Markdown; as plain text it shows its backslashes,
    # which is all an older release loses.
    pass
