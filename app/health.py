"""Health checks for load balancers and monitors: liveness and database readiness."""

from flask import Blueprint, Flask
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from .extensions import db, limiter

bp = Blueprint("health", __name__)


@bp.get("/livez")
@limiter.exempt
def livez():
    """200 while the process can answer at all; no database work (also the benchmark baseline)."""
    return {"status": "ok"}


@bp.get("/healthz")
@limiter.exempt
def healthz():
    """200 when the app can reach its database, 503 when it cannot."""
    try:
        db.session.execute(text("SELECT 1"))
    except SQLAlchemyError:
        db.session.rollback()
        return {"status": "unavailable", "database": "unavailable"}, 503
    return {"status": "ok", "database": "ok"}


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
