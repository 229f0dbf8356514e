"""Health checks for load balancers and monitors: liveness, database readiness, and whether
the database's schema is the one this release's code was written for."""

import re

from flask import Blueprint, Flask
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from .config import PROJECT_ROOT
from .extensions import db, limiter

bp = Blueprint("health", __name__)

SCHEMA_REVISION = "5b2f0c7e9a41"
"""The migration the models match: migrations/versions' head (test_migrations.py checks it).
App servers never load Alembic, so the head is written here."""


VERSIONS = PROJECT_ROOT / "migrations" / "versions"
_REVISION = re.compile(r'^revision = "(\w+)"$', re.M)
_FOLLOWS = re.compile(r'^down_revision = "(\w+)"$', re.M)


def _migrations() -> dict[str, str | None]:
    """Each migration in migrations/versions as it is on disk now, and the one it follows."""
    found = {}
    for path in VERSIONS.glob("*.py"):
        try:  # `git pull` may be writing or removing one as it is read
            source = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if revision := _REVISION.search(source):
            follows = _FOLLOWS.search(source)
            found[revision.group(1)] = follows.group(1) if follows else None
    return found


def _lineage(migrations: dict[str, str | None], revision: str | None) -> list[str]:
    """A revision and every one before it, newest first."""
    line = []
    while revision is not None and revision not in line:
        line.append(revision)
        revision = migrations.get(revision)
    return line


OLDER = frozenset(_lineage(_migrations(), SCHEMA_REVISION)[1:])
"""The migrations before this release's, read as the worker starts: `git pull` may add newer
files under it, and then only they can tell a newer schema from an unknown one."""


_NEWER: set[str] = set()


def _newer(revision: str) -> bool:
    """Whether a revision comes after this release's, by the migrations on disk now: the next
    release's `db upgrade` ran before this worker's restart. Only a yes is kept: the files that
    say so may arrive after the question is first asked."""
    if revision not in _NEWER and SCHEMA_REVISION in _lineage(_migrations(), revision)[1:]:
        _NEWER.add(revision)
    return revision in _NEWER


def schema_behind() -> str | None:
    """Why this release cannot serve the database's schema, in words for an admin; None if it
    can: its own, or a newer release's (migrations only add, so it serves until its restart)."""
    try:
        found = db.session.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    except SQLAlchemyError:
        db.session.rollback()
        return "the database records no migration: run `flask db upgrade`"
    if found == [SCHEMA_REVISION] or (len(found) == 1 and _newer(found[0])):
        return None
    at = ", ".join(found) or "no revision"
    if len(found) == 1 and found[0] not in OLDER:
        return (
            f"the database's schema is at {at}, which this release ({SCHEMA_REVISION}) does not "
            "know: is DATABASE_URL this Quizwright's database?"
        )
    return (
        f"the database's schema is at {at}, this release needs {SCHEMA_REVISION}: "
        "run `flask db upgrade`"
    )


@bp.get("/livez")
@limiter.exempt
def livez():
    """200 while the process can answer at all; no database work (also the benchmark baseline)."""
    return {"status": "ok"}


@bp.get("/healthz")
@limiter.exempt
def healthz():
    """200 when the app can reach its database and the schema is this release's; 503 with the
    reason when not (a restored old dump would otherwise look healthy while pages fail)."""
    try:
        db.session.execute(text("SELECT 1"))
    except SQLAlchemyError:
        db.session.rollback()
        return {"status": "unavailable", "database": "unavailable"}, 503
    behind = schema_behind()
    if behind:
        return {"status": "unavailable", "database": "ok", "schema": behind}, 503
    return {"status": "ok", "database": "ok", "schema": "ok"}


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
