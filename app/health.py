"""Health checks for load balancers and monitors: liveness, database readiness, and whether
the database's schema is the one this release's code was written for."""

from flask import Blueprint, Flask
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from .extensions import db, limiter

bp = Blueprint("health", __name__)

SCHEMA_REVISION = "5c1e9a7f3b02"
"""The migration the models match: migrations/versions' head (test_migrations.py checks it).
App servers never load Alembic, so the head is written here."""


def schema_behind() -> str | None:
    """Why the database's schema is not this release's, in words for an admin; None if it is."""
    try:
        found = db.session.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    except SQLAlchemyError:
        db.session.rollback()
        return "the database records no migration: run `flask db upgrade`"
    if found != [SCHEMA_REVISION]:
        at = ", ".join(found) or "no revision"
        return (
            f"the database's schema is at {at}, this release needs {SCHEMA_REVISION}: "
            "run `flask db upgrade`"
        )
    return None


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
